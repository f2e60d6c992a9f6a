"""Carrying the model's tool calls: gate, guards, send with a timeout, and the result written back as data."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import httpx2
from mcp import InputRequiredRoundsExceededError
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, CallToolResult

from labkit._i18n import N_, _, clauses
from labkit._notebook_errors import interrupted

from .._time_limits import scaled
from ..processes import MAX_RESULT_BYTES_ENV, MovingDeadline, moving_deadline
from ..trace import Kind, Outcome, Trace
from ._audit import AuditEntry, AuditLog, argument_hash
from ._capabilities import unserved_capability
from ._context import block_text, follow_links
from ._conversation import ToolCall, ToolResult
from ._gate import GatePolicy, check_call, effective_arguments
from ._guards import Guard
from ._http_record import refusal_in
from ._pool import HOST_SERVER, Route, ServerPool
from ._progress_updates import ProgressUpdates
from ._sanitise import sanitise_data
from ._server_output import StderrMark
from ._tasks import core_task_refusal

__all__ = ["ToolRouter", "result_as_data", "truncate"]


def _told(message: str, **fields: Any) -> tuple[str, str]:
    """A tool result the host writes itself: (what the model reads, the trace's account for the learner).

    What the model reads is English in either edition, like the tool descriptions and the servers' results around it:
    the simulated model reads English only. The learner reads the trace in the learner's language (notebook 05).
    """
    return message.format(**fields), _(message).format(**fields)


def result_as_data(result: CallToolResult, linked: dict[str, str] | None = None) -> str:
    """What the model is shown of a tool result: its structured data as JSON when there is any,
    else every content block: text, embedded resources' text, the text of linked resources the host followed
    (`linked`, by URI); every string sanitised (no escape sequences or invisible controls); images named, not
    inlined (notebook 02)."""
    if result.structured_content is not None and not result.is_error:
        return json.dumps(sanitise_data(result.structured_content), ensure_ascii=False)
    parts = [block_text(block, linked or {}) for block in result.content]
    return "\n".join(part for part in parts if part is not None)


def truncate(text: str, limit: int) -> str:
    """Cut a result to `limit` characters with a marker the model (and the learner) can see (notebook 05)."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[truncated by the host: {limit} of {len(text)} characters shown]"


class ToolRouter:
    """Carries each proposed call through the gate (with the guards' `on_call`), the server and the guards'
    `on_result`, and audits it (notebook 03). A name the host does not list is refused before any server sees it."""

    def __init__(
        self,
        trace: Trace,
        audit: AuditLog,
        policy: GatePolicy,
        pool: ServerPool,
        *,
        call_timeout: float,
        max_result_chars: int,
        guards: Sequence[Guard] = (),
    ) -> None:
        self.trace = trace
        self.audit = audit
        self.policy = policy
        self.pool = pool
        self.guards = list(guards)
        self.call_timeout = call_timeout
        self.max_result_chars = max_result_chars
        self.succeeded: set[str] = set()
        self._deadlines: set[MovingDeadline] = set()  # one per call in flight: a turn's calls run together
        self.offered: frozenset[str] = frozenset({"elicitation"})
        """The client capabilities the host serves, to name the one a failed call needed (the host sets it)."""

    async def execute(self, call: ToolCall) -> ToolResult:
        route = self.pool.route(call.name)
        if route is None:
            return self._unlisted(call)
        if call.error is not None:
            return self._refuse(call, route, "malformed", f"the arguments were not valid JSON: {call.error}", None)
        arguments = call.arguments or {}
        decision = await check_call(route.server, route.tool, call.name, arguments, self.policy, self.guards)
        self.trace.record(
            "host",
            "host",
            Kind.HOST_GATE,
            _("gate {name}: {summary}").format(name=call.name, summary=decision.summary),
            ref=call.id,
            name=call.name,
            payload={"server": route.server, "arguments": self._redacted(arguments), "reasons": list(decision.reasons)},
            outcome=decision.outcome,
            by=decision.by,
            **_ignored(decision.ignored_fields),
        )
        if not decision.allowed:
            return self._refuse(call, route, decision.outcome, clauses(decision.reasons), arguments)
        verdict = "allowed" if decision.approval == "not needed" else f"allowed ({decision.approval})"
        # An approval the model wrote itself carries no weight, so it is not passed on either.
        sent = {k: v for k, v in arguments.items() if k not in decision.ignored_fields}
        if decision.approval == "user":
            # The person approved the effective call, the schema's defaults filled in: send exactly that, so a
            # server whose own default differs from the one its schema shows cannot act on another value.
            sent = effective_arguments(route.tool, sent)
        return await self._send(call, route, sent, verdict)

    def _unlisted(self, call: ToolCall) -> ToolResult:
        """Fail closed: a name the host does not list now is refused here, and no server sees the call."""
        self.trace.record(
            "host",
            "host",
            Kind.HOST_GATE,
            _("gate {name}: blocked: the host lists no tool by that name").format(name=call.name),
            ref=call.id,
            name=call.name,
            payload={"offered": self.pool.names},
            outcome=Outcome.BLOCKED,
            by="tool list",
        )
        self.audit.add(
            AuditEntry(self.trace.round, HOST_SERVER, call.name, argument_hash(call.arguments), "blocked", "not sent")
        )
        down = "".join(
            f" The {server} server is unavailable: it could not be started, so its tools are not offered."
            for server in self.pool.unavailable
        )
        return ToolResult(
            call.id,
            f"The host did not run {call.name}: no server offers a tool by that name. "
            f"Tools you can use: {', '.join(self.pool.names)}.{down}",
            True,
        )

    def _redacted(self, arguments: dict[str, Any]) -> dict[str, Any]:
        for guard in self.guards:
            arguments = guard.redact(arguments)
        return arguments

    async def _send(self, call: ToolCall, route: Route, arguments: dict[str, Any], verdict: str) -> ToolResult:
        started, mark = time.monotonic(), len(self.trace)
        # What the server writes to stderr during a call that fails is shown to the learner, never to the model.
        stderr = StderrMark(self.pool.stderr.get(route.server))
        why: dict[str, str] = {}
        progress = ProgressUpdates()
        try:
            text, is_error = await self._invoke(route, arguments, why, progress)
        except asyncio.CancelledError:
            # Cancelled from outside the call (its own limit's cancel is caught within it): in a notebook, an interrupt.
            interrupted(
                _(
                    "Interrupted during the {tool} call to the {server} server: the host cancelled it, and no result "
                    "came back. Run the cell again to make the call again."
                ).format(tool=call.name, server=route.server)
            )
            raise
        except MCPError as error:
            outcome = f"protocol error {error.error.code}"
            stderr.record_since(self.trace, route.server, call.id, call.name)
            text = await self._explain(call.name, route, error, mark)
            self.trace.record(
                "host",
                "host",
                Kind.HOST_ERROR,
                _("{outcome} handled by the host: {message}").format(outcome=outcome, message=error.error.message),
                ref=call.id,
                name=call.name,
                payload=error.error.model_dump(mode="json"),
            )
            return self._audited(call, route, arguments, verdict, outcome, started, ToolResult(call.id, text, True))
        except httpx2.TransportError as error:
            # Over HTTP a server that died mid-call or between input rounds shows as a failed request, not a
            # closed stream; it gets the same account as a stdio crash.
            outcome = "connection lost"
            self.trace.record(
                "host",
                "host",
                Kind.HOST_ERROR,
                f"{outcome} handled by the host: {type(error).__name__}",
                ref=call.id,
                name=call.name,
                payload={"error": type(error).__name__, "detail": str(error)},
            )
            stderr.record_since(self.trace, route.server, call.id, call.name)
            text = await self._restarted(call.name, route)
            return self._audited(call, route, arguments, verdict, outcome, started, ToolResult(call.id, text, True))
        except InputRequiredRoundsExceededError as error:
            # The SDK's message is advice to a programmer (raise the cap, drive the loop by hand): the model is told
            # what happened, the trace keeps the SDK's words for the learner.
            text, account = _told(
                N_(
                    "The host stopped {tool}: the server kept asking for more input than the host allows ({rounds} "
                    "round(s) of questions), so the call did not complete."
                ),
                tool=call.name,
                rounds=error.max_rounds,
            )
            self.trace.record(
                "host", "host", Kind.HOST_ERROR, account, ref=call.id, name=call.name, payload={"detail": str(error)}
            )
            stderr.record_since(self.trace, route.server, call.id, call.name)
            return self._audited(
                call, route, arguments, verdict, "input rounds exceeded", started, ToolResult(call.id, text, True)
            )
        except RuntimeError as error:
            if not _refused_by_output_schema(error):
                raise
            # The SDK checks a result against the tool's outputSchema and raises when the result or the schema will
            # not do (an unresolvable `$ref`, content of another shape): the call fails closed, the host goes on.
            outcome = "result refused"
            text, account = _told(N_("The host refused the result of {tool}: {error}"), tool=call.name, error=error)
            self.trace.record("host", "host", Kind.HOST_ERROR, account, ref=call.id, name=call.name)
            return self._audited(call, route, arguments, verdict, outcome, started, ToolResult(call.id, text, True))
        except TimeoutError:
            limit, waited = scaled(self.call_timeout), time.monotonic() - started
            text, account = _told(
                N_("The host stopped waiting for {tool} after {limit} s."), tool=call.name, limit=f"{limit:g}"
            )
            if waited >= limit + 1:  # the limit was moved on while the server worked on a busy machine
                text, account = _told(
                    N_("The host stopped waiting for {tool} after {waited} s (its limit: {limit} s)."),
                    tool=call.name,
                    waited=f"{waited:.0f}",
                    limit=f"{limit:g}",
                )
            text += progress.so_far()
            self.trace.record("host", "host", Kind.HOST_ERROR, account + progress.so_far(), ref=call.id, name=call.name)
            if why:  # the machine's state is a note of its own: what happened to the call reads the same on any machine
                self.trace.record(
                    "host", "host", Kind.HOST_NOTE, why["note"], ref=call.id, name=call.name, cause=why["cause"]
                )
            stderr.record_since(self.trace, route.server, call.id, call.name)
            return self._audited(call, route, arguments, verdict, "timeout", started, ToolResult(call.id, text, True))
        if is_error:
            stderr.record_since(self.trace, route.server, call.id, call.name)
        else:
            self.succeeded.add(call.name)
        # Truncate first, so that what the guards add (the untrusted-data wrapper) is never cut off.
        shown = truncate(text, self.max_result_chars)
        if shown != text:
            self.trace.record(
                "host", "host", Kind.HOST_TRUNCATE, shown[shown.rfind("[truncated") :], ref=call.id, name=call.name
            )
        for guard in self.guards:
            shown = guard.on_result(route.server, call.name, shown, is_error)
        outcome = "isError" if is_error else "ok"
        return self._audited(call, route, arguments, verdict, outcome, started, ToolResult(call.id, shown, is_error))

    async def _invoke(
        self, route: Route, arguments: dict[str, Any], why: dict[str, str], progress: ProgressUpdates
    ) -> tuple[str, bool]:
        """The call's text and isError; a call that runs out of time raises TimeoutError, and `why` gets the
        deadline's `cause` ("hung", "computing", "busy") and its note for the learner.

        Every call asks for progress (a `progressToken`), so a slow server's reports reach the trace (notebook 10)."""
        if route.server == HOST_SERVER:
            answer = await self.pool.local[route.tool_name].handler(arguments)
            return answer.text, answer.is_error
        client = self.pool.client(route.server)
        execution = route.tool.execution
        task_support = execution.task_support if execution else None
        if refusal := core_task_refusal(client.protocol_version, route.tool_name, task_support):
            return refusal, True
        # Cancelling the call makes the SDK tell the server (notifications/cancelled) before it gives up.
        # Whether the server hung or worked is judged from its own processes, never from the host's others.
        async with moving_deadline(scaled(self.call_timeout), self.pool.process_tree(route.server)) as deadline:
            self._deadlines.add(deadline)
            try:
                result = await client.call_tool(route.tool_name, arguments, progress_callback=progress)
                linked = await follow_links(client, result.content)
            finally:
                self._deadlines.discard(deadline)
        if deadline.scope.cancelled_caught:
            if note := deadline.busy_note():
                why.update(cause=deadline.cause(), note=note)
            raise TimeoutError
        return result_as_data(result, linked), result.is_error

    @contextmanager
    def user_time(self) -> Iterator[None]:
        """While a person answers a form, the calls' clocks stop: their time is not the servers' (notebook 04).

        Every call in flight is paused, because the form's callback cannot tell which of a turn's
        concurrent calls asked for it."""
        paused = list(self._deadlines)
        for deadline in paused:
            deadline.pause()
        try:
            yield
        finally:
            for deadline in paused:
                deadline.resume()

    async def _explain(self, name: str, route: Route, error: MCPError, mark: int) -> str:
        # The model cannot repair a protocol error, so it gets the host's account, not the JSON-RPC error.
        if error.error.code == CONNECTION_CLOSED:
            return await self._restarted(name, route)
        refusal = refusal_in(self.trace.events[mark:], route.server)
        if refusal is not None:
            challenge = refusal.payload["headers"].get("www-authenticate") or "no WWW-Authenticate header"
            return (
                "The host could not run {name}: the {server} server answered HTTP {status} ({challenge}); the "
                "host has no credentials it accepts, so the call did not reach the tool."
            ).format(name=name, server=route.server, status=refusal.payload["status"], challenge=challenge)
        needed = unserved_capability(
            self.trace.events[mark:], route.server, error.error.model_dump(by_alias=True), self.offered
        )
        if needed is not None:
            return (
                f"The host could not run {name}: the {route.server} server asked the host for {needed}, a client "
                "capability this host does not offer, so the call could not go on."
            )
        if error.error.message.startswith("Unknown tool"):
            return (
                f"The host could not run {name}: no server offers a tool by that name. "
                f"Tools you can use: {', '.join(self.pool.names)}."
            )
        return f"The host could not run {name}: the server refused the request, and the host has dealt with it."

    async def _restarted(self, name: str, route: Route) -> str:
        await self.pool.restart(route.server)
        too_large = self.pool.too_large(route.server)
        if too_large is None:
            end = self.pool.ends.get(route.server)
            return (
                "The {server} server stopped during {name} ({status}); the host restarted it. "
                "The call did not complete."
            ).format(server=route.server, name=name, status=end.status_in("en") if end is not None else "exit status ?")
        self.trace.record(
            "host",
            "host",
            Kind.HOST_ERROR,
            too_large.account(),
            name=name,
            server=route.server,
            payload={"bytes": too_large.size, "whole": too_large.whole, "limit": too_large.limit},
        )
        return (
            "The {server} server sent a message of {size} bytes during {name}, over the host's limit of {limit} "
            "bytes ({env}); the host ended that connection and restarted the server. The call did not complete: "
            "ask for less."
        ).format(
            server=route.server,
            size=too_large.shown_size,
            name=name,
            limit=f"{too_large.limit:,}",
            env=MAX_RESULT_BYTES_ENV,
        )

    def _refuse(
        self, call: ToolCall, route: Route, decision: str, why: str, arguments: dict[str, Any] | None
    ) -> ToolResult:
        self.audit.add(
            AuditEntry(self.trace.round, route.server, call.name, argument_hash(arguments), decision, "not sent")
        )
        return ToolResult(call.id, f"The host did not run {call.name}: {why}.", True)

    def _audited(
        self,
        call: ToolCall,
        route: Route,
        arguments: dict[str, Any],
        decision: str,
        outcome: str,
        started: float,
        result: ToolResult,
    ) -> ToolResult:
        latency = round((time.monotonic() - started) * 1000, 1)
        self.audit.add(
            AuditEntry(self.trace.round, route.server, call.name, argument_hash(arguments), decision, outcome, latency)
        )
        return result


def _refused_by_output_schema(error: RuntimeError) -> bool:
    """Whether `error` came from the SDK's check of a result against its tool's outputSchema (`validate_tool_result`,
    whose documented error is a RuntimeError): told by where it was raised, not by its words."""
    frame = error.__traceback__
    while frame is not None:
        if frame.tb_frame.f_code.co_name == "validate_tool_result":
            return True
        frame = frame.tb_next
    return False


def _ignored(fields: Sequence[str]) -> dict[str, Any]:
    """The meta key naming the fields a gate ignored, present only when it ignored some."""
    return {"ignored": list(fields)} if fields else {}
