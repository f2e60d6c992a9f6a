"""Checks for notebook 05 (errors): each one runs the real logs, charts and faulty servers on the learner's answer."""

from __future__ import annotations

import time
from typing import Any

import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from labkit._i18n import N_, _

from ...host import (
    Conversation,
    GatePolicy,
    Host,
    ServerSpec,
    ToolCall,
    scripted_form,
    select_model,
    stdio_transport,
)
from ...trace import Kind, Trace
from .._exercises import register, result_text, run_sync
from .._model import make_client

__all__ = ["check_arguments", "check_limits", "check_two_errors"]

LAST_NIGHT, NOW, PEAK = "2026-10-29T20:00", "2026-10-30T09:00", "2026-10-30T00:00"
SLOW_SECONDS, HANG_SECONDS, TOLD_WITHIN = 2, 60, 6.0
MAX_CHARS, MAX_ROUNDS, CANONICAL_ROUNDS = 4000, 5, 3
_FAULTY = GatePolicy(auto_approve=frozenset({"sleep_for", "huge_result"}))
_CANONICAL = GatePolicy(auto_approve=frozenset({"render_error_trend"}))
_TASK = "Why did order-service errors rise last night? Make a trend chart."
_LIMITS = {"call_timeout", "max_result_chars", "round_cap"}
_MARKER = "[truncated by the host"


async def _query(arguments: dict[str, Any]) -> mcp_types.CallToolResult:
    async with Client(stdio_transport("logs", Trace())) as logs:
        return await logs.call_tool("query_errors", arguments)


@register(
    "05.1",
    N_(
        "An execution error (isError) is for the caller to repair: read the server's message and call "
        "again with arguments that keep the rule."
    ),
    N_("§1 Execution errors go to the model"),
)
def check_arguments(answer: Any) -> str | None:
    if not isinstance(answer, dict):
        return _("answer_1 must be the arguments dict for query_errors, e.g. {'service': ..., 'since': ...}.")
    result = run_sync(lambda: _query(answer))
    if result.is_error:
        return _("the logs server still refuses: {text}").format(text=result_text(result))
    data = result.structured_content or {}
    if data.get("service") != "order-service":
        return _("the call read {service!r}; the question is about order-service.").format(service=data.get("service"))
    if not (data["since"] <= LAST_NIGHT and data["until"] >= NOW):
        return _("the window {since} to {until} does not cover last night ({LAST_NIGHT} to {NOW}).").format(
            since=data["since"], until=data["until"], LAST_NIGHT=LAST_NIGHT, NOW=NOW
        )
    if data.get("peak_hour") != PEAK:
        return _("the peak hour came out as {peak_hour}, so the window misses the spike.").format(
            peak_hour=data.get("peak_hour")
        )
    return None


async def _faulty_limits(call_timeout: float, max_chars: int) -> list[tuple[str, Any, float]]:
    outcomes: list[tuple[str, Any, float]] = []
    async with Host(
        Trace(), [ServerSpec("faulty")], policy=_FAULTY, call_timeout=call_timeout, max_result_chars=max_chars
    ) as host:
        for name, arguments in (
            ("sleep_for", {"seconds": SLOW_SECONDS}),
            ("sleep_for", {"seconds": HANG_SECONDS}),
            ("huge_result", {"kilobytes": 64}),
        ):
            started = time.monotonic()
            result = await host.router.execute(ToolCall(f"call_{len(outcomes)}", name, arguments))
            outcomes.append((name, result, time.monotonic() - started))
    return outcomes


async def _loop_and_canonical(round_cap: int) -> tuple[Any, int, Any]:
    trace = Trace()
    model = select_model("anthropic").model
    async with Host(trace, [ServerSpec("logs")], round_cap=round_cap, required_tools=("query_errors",)) as host:
        looping = Conversation(make_client("anthropic", trace=trace, scenario="loop-forever"), model, host.tools)
        stopped = await host.run("Why did order-service errors rise last night?", looping)
    asked = len(trace.of_kind(Kind.MODEL_REQUEST))
    canonical = Trace()
    async with Host(
        canonical,
        [ServerSpec("logs"), ServerSpec("charts")],
        policy=_CANONICAL,
        round_cap=round_cap,
        required_tools=("query_errors", "render_error_trend"),
        elicit=scripted_form({"space": "personal"}),
    ) as host:
        conversation = Conversation(make_client("anthropic", trace=canonical, scenario="canonical"), model, host.tools)
        delivered = await host.run(_TASK, conversation)
    return stopped, asked, delivered


@register(
    "05.2",
    N_(
        "The host's limits turn a hang, a flood and a loop into clear errors, and must still leave room "
        "for healthy work."
    ),
    N_("§3 A hung tool, §5 An oversized result and §6 A model that never stops"),
)
def check_limits(answer: Any) -> str | None:
    if not isinstance(answer, dict) or set(answer) != _LIMITS:
        return _("answer_2 must be a dict with exactly the keys {_LIMITS}.").format(_LIMITS=sorted(_LIMITS))
    try:
        timeout, chars, cap = float(answer["call_timeout"]), int(answer["max_result_chars"]), int(answer["round_cap"])
    except (TypeError, ValueError):
        return _("call_timeout must be a number of seconds, max_result_chars and round_cap whole numbers.")
    if timeout <= 0 or chars <= 0 or cap <= 0:
        return _("every limit must be positive.")
    outcomes = run_sync(lambda: _faulty_limits(timeout, chars))  # (tool, result, seconds) per tool
    slow, (hung, hung_s), flood = outcomes[0][1], outcomes[1][1:], outcomes[2][1]
    if slow.is_error:
        return _("a healthy tool that takes {SLOW_SECONDS} s was cut off ({text}): the timeout is too short.").format(
            SLOW_SECONDS=SLOW_SECONDS, text=slow.text
        )
    if not hung.is_error or hung_s > TOLD_WITHIN:
        return _(
            "a hung tool was reported after {hung_s:.1f} s; the model must be told within {TOLD_WITHIN:g} s."
        ).format(hung_s=hung_s, TOLD_WITHIN=TOLD_WITHIN)
    if len(flood.text) > MAX_CHARS + 80 or _MARKER not in flood.text:
        return _(
            "the model was sent {n_text:,} characters of a 64 KiB result; at most {MAX_CHARS:,}, with the marker."
        ).format(n_text=len(flood.text), MAX_CHARS=MAX_CHARS)
    stopped, asked, delivered = run_sync(lambda: _loop_and_canonical(cap))
    if stopped.delivered or asked > MAX_ROUNDS:
        return _("a looping model was asked {asked} times before the host stopped it; at most {MAX_ROUNDS}.").format(
            asked=asked, MAX_ROUNDS=MAX_ROUNDS
        )
    if not delivered.delivered:
        return _("the canonical task needs {CANONICAL_ROUNDS} rounds and was not delivered: {reason}.").format(
            CANONICAL_ROUNDS=CANONICAL_ROUNDS, reason=delivered.reason
        )
    return None


async def _send_both(answer: dict[str, Any]) -> dict[str, Any]:
    outcomes: dict[str, Any] = {}
    async with Client(stdio_transport("logs", Trace())) as logs:
        for label, request in answer.items():
            try:
                outcomes[label] = await logs.session.send_request(request, TypeAdapter(dict[str, Any]))
            except MCPError as error:
                outcomes[label] = error
    return outcomes


@register(
    "05.3",
    N_(
        "A protocol error is a request the server cannot even read (wrong shape, JSON-RPC error); an "
        "execution error is a well-formed call whose values fail (a result with isError)."
    ),
    N_("§1 Execution errors and §2 Protocol errors stay with the host"),
)
def check_two_errors(answer: Any) -> str | None:
    labels = {"protocol error", "execution error"}
    if not isinstance(answer, dict) or set(answer) != labels:
        return _("answer_3 must be a dict with exactly the keys {labels}, each a RawRequest(...).").format(
            labels=sorted(labels)
        )
    for label, request in answer.items():
        if not isinstance(request, mcp_types.Request):
            return _("answer_3[{label!r}] must be a RawRequest(method=..., params=...), not {type_name}.").format(
                label=label, type_name=type(request).__name__
            )
        params = request.params if isinstance(request.params, dict) else {}
        if request.method != "tools/call" or params.get("name") != "query_errors":
            return _("answer_3[{label!r}] must be a tools/call of query_errors (change only its arguments).").format(
                label=label
            )
    outcomes = run_sync(lambda: _send_both(answer))
    protocol, execution = outcomes["protocol error"], outcomes["execution error"]
    if not isinstance(protocol, MCPError):
        return _(
            "the 'protocol error' request was accepted and answered with a result: break its shape, not its values."
        )
    if protocol.error.code != -32602:
        return _("the 'protocol error' request got {code} {message!r}, not -32602.").format(
            code=protocol.error.code, message=protocol.error.message
        )
    if isinstance(execution, MCPError):
        return _(
            "the 'execution error' request was refused as a protocol error ({code} {message!r}): keep "
            "the shape right and make a value wrong."
        ).format(code=execution.error.code, message=execution.error.message)
    if not execution.get("isError"):
        return _("the 'execution error' request succeeded: give it a value the tool refuses (a bad since, say).")
    return None
