"""The lab's scripted scenarios: what the simulated model does, turn by turn, for each lesson."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from labkit._i18n import _

from ._dialogue import Decision, Dialogue, PlannedCall, ToolOutcome
from ._quoting import quote_chart, quote_query

__all__ = ["NO_SCENARIO", "SCENARIOS", "Scenario", "resolve_tool", "select_scenario"]

NO_SCENARIO = "none"  # header value that turns playbooks off, so a lesson can show the rules alone

SERVICE = "order-service"
SINCE = "2026-10-29T20:00"
QUERY = "query_errors"
CHART = "render_error_trend"

Step = Callable[[Dialogue], Decision]


@dataclass(frozen=True)
class Scenario:
    """A playbook: `steps[k]` scripts the model's k-th turn; each step may read the conversation (notebook 03)."""

    name: str
    summary: str
    steps: tuple[Step, ...]
    pattern: str | None = None
    repeat_last: bool = False
    invents_tools: frozenset[str] = frozenset()

    def step(self, dialogue: Dialogue) -> Decision | None:
        turn = dialogue.assistant_turns
        if turn >= len(self.steps):
            return self.steps[-1](dialogue) if self.repeat_last else None
        return self.steps[turn](dialogue)


def resolve_tool(mcp_name: str, offered: list[str]) -> str | None:
    """The offered tool a playbook's MCP name means: exact, then by suffix (`logs__query_errors`) (notebook 02)."""
    wanted = mcp_name.replace(".", "_")
    return next((n for n in offered if n == wanted), None) or next(
        (n for n in offered if n.endswith("_" + wanted)), None
    )


def _result_of(dialogue: Dialogue, mcp_name: str) -> ToolOutcome | None:
    wanted = mcp_name.replace(".", "_")
    outcomes = [r for m in dialogue.messages for r in m.results]
    matching = [r for r in outcomes if resolve_tool(wanted, [dialogue.call_name(r.call_id)])]
    return matching[-1] if matching else None


def _service(dialogue: Dialogue) -> str:
    answer = dialogue.user_texts[-1]
    named = re.search(r"[\w.]+-service\b", answer)
    return named.group() if named else answer.strip().strip(".")


def _query(service: str = SERVICE, since: str = SINCE, text: str = "") -> Step:
    return lambda d: Decision(text, [PlannedCall(QUERY, {"service": service, "since": since})])


def _chart(d: Dialogue) -> Decision:
    return Decision("", [PlannedCall(CHART, {"service": _service_used(d), "since": SINCE})])


def _service_used(d: Dialogue) -> str:
    calls = [c for m in d.messages for c in m.calls if resolve_tool(QUERY, [c.name])]
    return calls[-1].arguments.get("service", SERVICE) if calls else SERVICE


def _final(d: Dialogue) -> Decision:
    return Decision(f"{quote_query(_result_of(d, QUERY), SERVICE, SINCE)} {quote_chart(_result_of(d, CHART))}")


def _ask_service(d: Dialogue) -> Decision:
    return Decision(_("Which service should I look at? Please name it, for example `order-service`."))


def _query_named_service(d: Dialogue) -> Decision:
    return _query(_service(d))(d)


def _retry_since(d: Dialogue) -> Decision:
    error = _result_of(d, QUERY)
    reason = error.text.splitlines()[0][:160] if error else "no result"
    return _query(
        text=_('The tool rejected since="last night" ({reason}). Retrying with an ISO timestamp.').format(reason=reason)
    )(d)


def _call_missing_tool(d: Dialogue) -> Decision:
    return Decision("", [PlannedCall("query_error_logs", {"service": SERVICE, "since": SINCE})])


def _after_unknown_tool(d: Dialogue) -> Decision:
    error = _result_of(d, "query_error_logs")
    reason = error.text.splitlines()[0][:160] if error else "no result"
    return _query(
        text=_("`query_error_logs` did not work ({reason}). Using `{tool}` instead.").format(reason=reason, tool=QUERY)
    )(d)


def _both_or_query(d: Dialogue) -> Decision:
    if not d.parallel:
        return _query()(d)
    return Decision(
        "",
        [
            PlannedCall(QUERY, {"service": SERVICE, "since": SINCE}),
            PlannedCall(CHART, {"service": SERVICE, "since": SINCE}),
        ],
    )


def _final_or_chart(d: Dialogue) -> Decision:
    return _final(d) if d.parallel else _chart(d)


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario(
            "canonical",
            "query_errors → render_error_trend → answer quoting the numbers",
            (_query(), _chart, _final),
            pattern=r"order-service errors rise last night",
        ),
        Scenario(
            "ask-back",
            "asks which service → query_errors → render_error_trend → answer",
            (_ask_service, _query_named_service, _chart, _final),
            pattern=r"^why did errors rise last night",
        ),
        Scenario(
            "bad-since",
            'query_errors(since="last night") → retry with ISO time → chart → answer',
            (_query(since="last night"), _retry_since, _chart, _final),
        ),
        Scenario(
            "unknown-tool",
            "calls query_error_logs (not offered) → query_errors → chart → answer",
            (_call_missing_tool, _after_unknown_tool, _chart, _final),
            invents_tools=frozenset({"query_error_logs"}),
        ),
        Scenario(
            "loop-forever",
            "calls query_errors again every turn, to show the host's loop cap",
            (_query(),),
            repeat_last=True,
        ),
        Scenario(
            "parallel",
            "query_errors and render_error_trend in one turn → answer",
            (_both_or_query, _final_or_chart, _final),
        ),
    )
}


def select_scenario(dialogue: Dialogue) -> Scenario | None:
    """The scenario named by the `x-teaching-scenario` header ("none": rules only), else by pattern (notebook 03)."""
    if dialogue.scenario:
        return None if dialogue.scenario == NO_SCENARIO else SCENARIOS.get(dialogue.scenario)
    first = dialogue.user_texts[0] if dialogue.user_texts else ""
    return next((s for s in SCENARIOS.values() if s.pattern and re.search(s.pattern, first, re.I)), None)
