"""The error taxonomy: per recorded failure, its wire shape, who sees it, what the model sees and who can fix it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from labkit._i18n import N_, _

from ..trace import Event, Kind, Meta, Outcome, Trace, headed

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FailureRow", "classify", "failure_table", "tool_results_sent"]

_TEXT_LIMIT = 90
_MARKER = "[truncated by the host"
_UNKNOWN_TOOL = "Unknown tool"
_WHO_FIXES = {
    N_("execution error"): N_("the model: it changes its arguments"),
    N_("unlisted tool"): N_("the model picks a listed tool; the host refuses any other name (fail closed)"),
    N_("unknown tool"): N_("the client's developer: call only a tool the server listed"),
    N_("unknown method"): N_("the client's developer: call a method the server has"),
    N_("invalid params"): N_("the client's developer: send the request in the schema's shape"),
    N_("protocol error"): N_("the client's or the server's developer"),
    N_("timeout"): N_("the server's operator; the host's timeout keeps the run going"),
    N_("crash"): N_("the server's developer; the host's one restart keeps the run going"),
    N_("oversized result"): N_("the server's developer (page or summarise); the host's limit protects the context"),
    N_("endless loop"): N_("the host, with a round cap: the model does not stop itself"),
}
_HEADINGS = {
    "failure": N_("failure"),
    "kind": N_("kind"),
    "wire shape": N_("wire shape"),
    "who sees it": N_("who sees it"),
    "what the model sees": N_("what the model sees"),
    "who can fix it": N_("who can fix it"),
}


@dataclass(frozen=True)
class FailureRow:
    """One failure as the trace of its run shows it (notebook 05)."""

    failure: str
    kind: str
    wire: str
    seen_by: str
    model_sees: str
    fixed_by: str


def tool_results_sent(event: Event) -> list[str]:
    """The tool-result texts a `model.request` carried in its newest turn, in any of the three APIs (notebook 04)."""
    body = (event.payload or {}).get("body") or {}
    if isinstance(body.get("input"), list):
        items = [i for i in body["input"] if isinstance(i, dict)]
        return [str(i.get("output")) for i in items if i.get("type") == "function_call_output"]
    messages = body.get("messages") or []
    trailing: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        trailing.insert(0, str(message.get("content")))
    if trailing:
        return trailing
    last = messages[-1].get("content") if messages else None
    if not isinstance(last, list):
        return []
    return [_block_text(b.get("content")) for b in last if isinstance(b, dict) and b.get("type") == "tool_result"]


def classify(failure: str, trace: Trace) -> FailureRow:
    """The first failure in a run's trace, described from its recorded frames and model requests (notebook 05)."""
    events = list(trace)
    found = _first_failure(events)
    if found is None:
        raise ValueError(_("{failure!r}: the trace shows no failure").format(failure=failure))
    kind, event = found
    wire = _wire(kind, event, events)
    after = [e for e in events if e.kind == Kind.MODEL_REQUEST and e.seq > event.seq]
    results = tool_results_sent(after[0]) if after else []
    model_sees = _as_seen(" | ".join(results)) if results else _unseen(kind, events)
    return FailureRow(
        failure, kind, wire, _seen_by(kind, event, results, bool(after)), model_sees, _fixed_by(kind, event, events)
    )


def failure_table(runs: Mapping[str, Trace]) -> pd.DataFrame:
    """The taxonomy as a table: one classified row per named run (notebook 05)."""
    import pandas as pd

    rows = [{**asdict(row), "kind": _(row.kind)} for row in (classify(name, trace) for name, trace in runs.items())]
    frame = pd.DataFrame(rows).rename(
        columns={
            "wire": "wire shape",
            "seen_by": "who sees it",
            "model_sees": "what the model sees",
            "fixed_by": "who can fix it",
        }
    )
    return headed(frame.set_index("failure"), _HEADINGS)


def _first_failure(events: list[Event]) -> tuple[str, Event] | None:
    for event in events:
        payload = event.payload if isinstance(event.payload, dict) else {}
        if event.kind == Kind.HOST_STOP:
            return "endless loop", event
        if event.kind in (Kind.TRANSPORT_CLOSED, Kind.HOST_RESTART):  # over HTTP a crash shows only as the restart
            return "crash", event
        decided = (event.meta.get(Meta.OUTCOME), event.meta.get(Meta.BY))
        if event.kind == Kind.HOST_GATE and decided == (Outcome.BLOCKED, "tool list"):
            return "unlisted tool", event
        if (
            event.kind == Kind.JSONRPC_NOTIFICATION
            and event.src == "client"
            and event.name == "notifications/cancelled"
        ):
            return "timeout", event
        if event.kind == Kind.HOST_TRUNCATE:
            return "oversized result", event
        if event.kind == Kind.JSONRPC_ERROR and event.src == "server":
            return _protocol_kind(payload["error"]), event
        if (
            event.kind == Kind.JSONRPC_RESPONSE
            and event.src == "server"
            and (payload.get("result") or {}).get("isError")
        ):
            return "execution error", event
    return None


def _protocol_kind(error: dict[str, Any]) -> str:
    if error.get("code") == -32602 and str(error.get("message", "")).startswith(_UNKNOWN_TOOL):
        return "unknown tool"
    return {-32601: "unknown method", -32602: "invalid params"}.get(error.get("code", 0), "protocol error")


def _wire(kind: str, event: Event, events: list[Event]) -> str:
    payload = event.payload if isinstance(event.payload, dict) else {}
    if kind == "execution error":
        return _('result, isError: true: "{text}"').format(text=_short(_result_text(payload["result"]), 60))
    if kind in ("unknown tool", "unknown method", "invalid params", "protocol error"):
        error = payload["error"]
        status = [e.meta[Meta.STATUS] for e in events if e.kind == Kind.HTTP_RESPONSE and e.seq < event.seq]
        return f"error {error['code']} {error['message']!r}" + (f" (HTTP {status[-1]})" if status else "")
    if kind == "timeout":
        handled = [e for e in events if e.kind == Kind.HOST_ERROR and e.seq > event.seq]
        code = (handled[0].payload or {}).get("code") if handled else None
        raised = _("; the client's SDK raised {code} itself").format(code=code) if code is not None else ""
        return _("no reply; the client sent notifications/cancelled for id {requestId}{raised}").format(
            requestId=payload["params"]["requestId"], raised=raised
        )
    if kind == "crash" and event.kind == Kind.TRANSPORT_CLOSED:
        return _("no reply; the stream from the server ended ({what})").format(what=event.summary.split(":")[0])
    if kind == "crash":
        posts = [e for e in events if e.kind in (Kind.HTTP_REQUEST, Kind.HTTP_RESPONSE) and e.seq < event.seq]
        if posts and posts[-1].kind == Kind.HTTP_REQUEST:
            return _("no reply; the HTTP request {summary!r} got no response").format(summary=posts[-1].summary)
        return _("no reply; the host restarted the server")
    if kind == "unlisted tool":
        sent = [e for e in events if e.kind == Kind.JSONRPC_REQUEST and e.name == event.name]
        return _("nothing: the host refused {name} itself; tools/call sent for it: {n_sent}").format(
            name=event.name, n_sent=len(sent)
        )
    if kind == "oversized result":
        reply = [e for e in events if e.kind == Kind.JSONRPC_RESPONSE and e.src == "server" and e.seq < event.seq][-1]
        return _("result of {n:,} characters, isError: false").format(n=len(_result_text(reply.payload["result"])))
    calls = [
        e
        for e in events
        if e.kind == Kind.JSONRPC_REQUEST and e.src == "client" and e.payload.get("method") == "tools/call"
    ]
    failed = [e for e in events if e.kind == Kind.JSONRPC_ERROR or _is_error_result(e)]
    return _("nothing wrong on the wire: {n_calls} tools/call, {n_ok} answered without error").format(
        n_calls=len(calls), n_ok=len(calls) - len(failed)
    )


def _seen_by(kind: str, event: Event, results: list[str], model_asked: bool) -> str:
    if kind == "execution error":
        text = _result_text(event.payload["result"])
        return _("the model: the server's own words") if any(text in r for r in results) else _("the model, reworded")
    if kind == "endless loop":
        return _("the host, then the user (the host's final message)")
    if kind == "oversized result":
        return _("the host; the model gets the cut text")
    if kind == "unlisted tool":
        return _("the host; the model gets the list of tools it can use")
    if not model_asked:
        return _("the host only: no model call was involved")
    return _("the host; the model gets the host's account, not the error")


def _as_seen(text: str) -> str:
    marker = text.rfind(_MARKER)
    if marker < 0:
        return _short(text, _TEXT_LIMIT)
    cut = text[:marker].rstrip("\n")
    return _("{n_cut:,} characters, then the marker {strip!r}").format(n_cut=len(cut), strip=text[marker:].strip())


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _unseen(kind: str, events: list[Event]) -> str:
    if kind == "endless loop":
        return _("nothing more: the host stops asking it")
    return (
        _("nothing: the model was not asked again")
        if any(e.kind == Kind.MODEL_REQUEST for e in events)
        else _("nothing: no model in this run")
    )


def _fixed_by(kind: str, event: Event, events: list[Event]) -> str:
    who = _(_WHO_FIXES[kind])
    if kind == "execution error":
        failed = event.name
        later = [e for e in events if e.seq > event.seq and e.kind == Kind.JSONRPC_RESPONSE and e.name == failed]
        if any(not _is_error_result(e) for e in later):
            who += _(" (it did: its retry succeeded)")
    return who


def _is_error_result(event: Event) -> bool:
    payload = event.payload if isinstance(event.payload, dict) else {}
    return event.kind == Kind.JSONRPC_RESPONSE and bool((payload.get("result") or {}).get("isError"))


def _result_text(result: dict[str, Any]) -> str:
    return "\n".join(block.get("text", "") for block in result.get("content", []) if block.get("type") == "text")


def _block_text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)
