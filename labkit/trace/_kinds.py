"""The trace's vocabulary: every event kind, the meta keys decisions carry, and the outcomes they record."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from enum import StrEnum

from labkit._i18n import N_, _

__all__ = ["KIND_MEANINGS", "Kind", "Meta", "Outcome"]


class Kind(StrEnum):
    """Every event kind a run records; each is a string, so `event.kind == Kind.HOST_GATE` reads as it says."""

    USER_ASK = "user.ask"
    USER_ANSWER = "user.answer"
    HOST_GATE = "host.gate"
    HOST_FORM = "host.form"
    HOST_RELAY = "host.relay"
    HOST_WRITEBACK = "host.writeback"
    HOST_CHECK = "host.check"
    HOST_DELIVER = "host.deliver"
    HOST_STOP = "host.stop"
    HOST_ERROR = "host.error"
    HOST_RESTART = "host.restart"
    HOST_UNAVAILABLE = "host.unavailable"
    HOST_TRUNCATE = "host.truncate"
    HOST_NOTE = "host.note"
    HOST_APPROVAL = "host.approval"
    HOST_SCAN = "host.scan"
    HOST_PIN = "host.pin"
    HOST_HINTS = "host.hints"
    HOST_TAINT = "host.taint"
    HOST_SANITIZE = "host.sanitize"
    HOST_CONTEXT = "host.context"
    SKILL_CATALOG = "skill.catalog"
    SKILL_LOAD = "skill.load"
    SKILL_RESOURCE = "skill.resource"
    SKILL_PROMPT = "skill.prompt"
    SKILL_REFUSE = "skill.refuse"
    MODEL_REQUEST = "model.request"
    MODEL_RESPONSE = "model.response"
    JSONRPC_REQUEST = "jsonrpc.request"
    JSONRPC_RESPONSE = "jsonrpc.response"
    JSONRPC_ERROR = "jsonrpc.error"
    JSONRPC_NOTIFICATION = "jsonrpc.notification"
    HTTP_REQUEST = "http.request"
    HTTP_RESPONSE = "http.response"
    TRANSPORT_ERROR = "transport.error"
    TRANSPORT_CLOSED = "transport.closed"
    TAP_ERROR = "tap.error"
    TAP_FORGED = "tap.forged"
    SERVER_QUERY = "server.query"
    SERVER_RENDER = "server.render"
    SERVER_RECEIVED = "server.received"
    SERVER_STDERR = "server.stderr"
    SYSTEM_ANSWER = "system.answer"
    AUTH_CONSENT = "auth.consent"
    AUTH_REDIRECT = "auth.redirect"
    AUTH_REFUSED = "auth.refused"


_MEANINGS: dict[Kind, str] = {
    Kind.USER_ASK: N_("the user's question to the host"),
    Kind.USER_ANSWER: N_("the user's answer: to a form, an approval or the model's question"),
    Kind.HOST_GATE: N_("the host's verdict on one proposed call (allow-list, schema, approval)"),
    Kind.HOST_FORM: N_("the host shows a server's question as a form"),
    Kind.HOST_RELAY: N_("the host shows the model's question to the user"),
    Kind.HOST_WRITEBACK: N_("the host writes tool results back to the model as data"),
    Kind.HOST_CHECK: N_("the host checks the candidate answer against the task"),
    Kind.HOST_DELIVER: N_("the host delivers the answer to the user"),
    Kind.HOST_STOP: N_("the host stops the run without delivering"),
    Kind.HOST_ERROR: N_("a protocol error, timeout or crash the host handled"),
    Kind.HOST_RESTART: N_("the host restarts a server that stopped"),
    Kind.HOST_UNAVAILABLE: N_("a server could not be started; the host goes on without it"),
    Kind.HOST_TRUNCATE: N_("the host cut a result that was too long"),
    Kind.HOST_NOTE: N_("a note the host or a lesson adds to the story"),
    Kind.HOST_APPROVAL: N_("a person is asked to approve a call"),
    Kind.HOST_SCAN: N_("the scanner's verdict on a tool definition"),
    Kind.HOST_PIN: N_("a tool definition checked against its pin"),
    Kind.HOST_HINTS: N_("annotations of an untrusted server are ignored"),
    Kind.HOST_TAINT: N_("untrusted content entered the context"),
    Kind.HOST_SANITIZE: N_("hidden characters were removed from a result"),
    Kind.HOST_CONTEXT: N_("servers' instructions the host put in the system prompt"),
    Kind.SKILL_CATALOG: N_("tier 1: the skill catalog in the system prompt"),
    Kind.SKILL_LOAD: N_("tier 2: a skill's body loaded"),
    Kind.SKILL_RESOURCE: N_("tier 3: a skill's file read"),
    Kind.SKILL_PROMPT: N_("an MCP prompt a loaded skill names, fetched"),
    Kind.SKILL_REFUSE: N_("the host refused a skill request"),
    Kind.MODEL_REQUEST: N_("a request body the SDK sent to the model API"),
    Kind.MODEL_RESPONSE: N_("the model API's response body"),
    Kind.JSONRPC_REQUEST: N_("a JSON-RPC request frame (either direction)"),
    Kind.JSONRPC_RESPONSE: N_("a JSON-RPC result frame"),
    Kind.JSONRPC_ERROR: N_("a JSON-RPC error frame"),
    Kind.JSONRPC_NOTIFICATION: N_("a JSON-RPC notification frame"),
    Kind.HTTP_REQUEST: N_("an HTTP request of the Streamable HTTP transport"),
    Kind.HTTP_RESPONSE: N_("its HTTP status and MCP headers"),
    Kind.TRANSPORT_ERROR: N_("a line on the wire that is not JSON-RPC"),
    Kind.TRANSPORT_CLOSED: N_("the server's side of the connection ended"),
    Kind.TAP_ERROR: N_("the tap could not record a frame or a server's report (the session goes on)"),
    Kind.TAP_FORGED: N_("a server reported an event in another actor's name; it was not recorded as theirs"),
    Kind.SERVER_QUERY: N_("what a server asked its business system"),
    Kind.SERVER_RENDER: N_("a server drew a chart"),
    Kind.SERVER_RECEIVED: N_("what an untrusted server received (ground truth)"),
    Kind.SERVER_STDERR: N_("what a server wrote to its stderr during a failed call: shown to you, never to the model"),
    Kind.SYSTEM_ANSWER: N_("the business system's answer"),
    Kind.AUTH_CONSENT: N_("the user's browser on the authorization server's consent page"),
    Kind.AUTH_REDIRECT: N_("the authorization server sends the browser back to the host, with a code or a refusal"),
    Kind.AUTH_REFUSED: N_("the authorization server refuses the sign-in outright, with an OAuth error saying why"),
}


class _Meanings(Mapping[Kind, str]):
    """Each kind's meaning, in the learner's language when read."""

    def __getitem__(self, kind: Kind) -> str:
        return _(_MEANINGS[kind])

    def __iter__(self) -> Iterator[Kind]:
        return iter(_MEANINGS)

    def __len__(self) -> int:
        return len(_MEANINGS)


KIND_MEANINGS: Mapping[Kind, str] = _Meanings()


class Meta(StrEnum):
    """Keys of `Event.meta` that code reads; decisions are read from these, never from a summary's words."""

    SERVER = "server"
    ERA = "era"
    METHOD = "method"
    LAYER = "layer"
    STATUS = "status"
    OUTCOME = "outcome"
    BY = "by"
    SIMULATED = "simulated"
    CALL_IDS = "call_ids"
    CHANGED = "changed"
    IGNORED = "ignored"
    ASKED_BY = "asked_by"  # a form's asker: the server whose request it shows, or "host" for the host's own
    TRUST = "trust"  # whether the host trusts the server a form or result came from: trusted, untrusted, unknown
    PAYLOAD_REFS = "payload_refs"  # texts of the payload kept by reference: path, bytes, sha256
    REASON = "reason"  # a model response's reason for its calls, as the simulated model gave it (not from its notes)


class Outcome(StrEnum):
    """What a decision event decided (`meta["outcome"]`)."""

    ALLOWED = "allowed"
    BLOCKED = "blocked"
    DENIED = "denied"
    WITHHELD = "withheld"
    APPROVED = "approved"
    REFUSED = "refused"
    IGNORED = "ignored"
