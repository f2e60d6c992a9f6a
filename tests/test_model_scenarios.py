"""Every playbook scenario, end to end, through the real SDK clients on all three APIs."""

from __future__ import annotations

import json
import re

import pytest

from labkit.host import Conversation, ToolCall, ToolResult, Turn
from labkit.lessons import make_client
from labkit.simulator import MODEL_NAME, SCENARIOS
from labkit.trace import Trace

QUESTION = "Why did order-service errors rise last night? Make a trend chart."
VAGUE_QUESTION = "Why did errors rise last night? Make a trend chart."
CHART_PATH = "charts/personal/order-service-errors.png"
TOOLS = [
    {
        "name": "query_errors",
        "description": "Count a service's errors per hour since a time. Use when the user asks why errors rose.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "service": {"type": "string"},
                "since": {"type": "string", "format": "date-time"},
                "limit": {"type": "integer", "default": 5},
            },
            "required": ["service", "since"],
        },
    },
    {
        "name": "charts.render_error_trend",  # a namespaced MCP name: the playbook must still find it
        "description": "Render an hourly error trend chart for a service and save it.",
        "inputSchema": {
            "type": "object",
            "properties": {"service": {"type": "string"}, "since": {"type": "string"}},
            "required": ["service", "since"],
        },
    },
]
QUERY_RESULT = {  # the structuredContent shape of servers/logs.py
    "service": "order-service",
    "since": "2026-10-29T20:00",
    "until": "2026-10-30T09:00",
    "total": 412,
    "peak_hour": "2026-10-29T23:00",
    "peak_errors": 131,
    "hourly": [{"hour": "2026-10-29T23:00", "errors": 131}],
    "top_errors": [{"code": "DB_POOL", "message": "DB pool exhausted", "count": 201}],
}
APIS = ["anthropic", "chat", "responses"]


def execute(call: ToolCall) -> ToolResult:
    """A tiny stand-in for the MCP servers."""
    if call.error:
        return ToolResult(call.id, call.error, is_error=True)
    if call.name == "query_errors":
        if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d", call.arguments["since"]):
            return ToolResult(call.id, "since must be ISO 8601, e.g. 2026-10-29T20:00", is_error=True)
        return ToolResult(call.id, json.dumps(QUERY_RESULT))
    if call.name == "charts.render_error_trend":
        return ToolResult(call.id, json.dumps({"path": CHART_PATH}))
    return ToolResult(call.id, f"Unknown tool: {call.name}", is_error=True)


async def run(
    api: str,
    question: str,
    *,
    scenario: str | None = None,
    answers: tuple[str, ...] = (),
    max_turns: int = 8,
    trace: Trace | None = None,
    **options: object,
) -> list[Turn]:
    client = make_client("anthropic" if api == "anthropic" else "openai", trace=trace, scenario=scenario, env={})
    conversation = Conversation(client, MODEL_NAME, TOOLS, api=api, **options)  # type: ignore[arg-type]
    conversation.add_user(question)
    pending = list(answers)
    turns: list[Turn] = []
    for _ in range(max_turns):
        turn = await conversation.ask()
        turns.append(turn)
        if turn.tool_calls:
            conversation.add_tool_results([execute(c) for c in turn.tool_calls])
        elif pending:
            conversation.add_user(pending.pop(0))
        else:
            break
    return turns


def calls_of(turns: list[Turn]) -> list[list[tuple[str, dict | None]]]:
    return [[(c.name, c.arguments) for c in t.tool_calls] for t in turns]


QUERY = ("query_errors", {"service": "order-service", "since": "2026-10-29T20:00"})
CHART = ("charts.render_error_trend", {"service": "order-service", "since": "2026-10-29T20:00"})


def assert_final_answer(turn: Turn) -> None:
    assert turn.text.startswith("[simulated] ")
    for fact in ("412", "2026-10-29T23:00", "131", "DB pool exhausted", CHART_PATH):
        assert fact in turn.text, f"{fact!r} missing from {turn.text!r}"


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_canonical_queries_then_charts_then_quotes_the_numbers(api: str) -> None:
    turns = await run(api, QUESTION)
    assert calls_of(turns) == [[QUERY], [CHART], []]
    assert_final_answer(turns[-1])


@pytest.mark.anyio
async def test_responses_stateful_previous_response_id_gives_the_same_run() -> None:
    trace = Trace()
    turns = await run("responses", QUESTION, stateful=True, trace=trace)
    assert calls_of(turns) == [[QUERY], [CHART], []]
    assert_final_answer(turns[-1])
    later_requests = [e.payload["body"] for e in trace.of_kind("model.request")][1:]
    assert all(body["previous_response_id"].startswith("resp_sim_") for body in later_requests)
    assert all(item["type"] == "function_call_output" for body in later_requests for item in body["input"])


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_ask_back_asks_for_the_service_before_any_tool_call(api: str) -> None:
    turns = await run(api, VAGUE_QUESTION, answers=("order-service",))
    assert turns[0].tool_calls == [] and "Which service" in turns[0].text
    assert calls_of(turns)[1:] == [[QUERY], [CHART], []]
    assert_final_answer(turns[-1])


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_bad_since_is_retried_with_an_iso_time(api: str) -> None:
    turns = await run(api, QUESTION, scenario="bad-since")
    assert calls_of(turns) == [
        [("query_errors", {"service": "order-service", "since": "last night"})],
        [QUERY],
        [CHART],
        [],
    ]
    assert "ISO 8601" in turns[1].text  # the retry quotes the tool's error
    assert_final_answer(turns[-1])


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_unknown_tool_then_the_right_one(api: str) -> None:
    turns = await run(api, QUESTION, scenario="unknown-tool")
    assert [c.name for c in turns[0].tool_calls] == ["query_error_logs"]
    assert calls_of(turns)[1:] == [[QUERY], [CHART], []]
    assert "Unknown tool: query_error_logs" in turns[1].text
    assert_final_answer(turns[-1])


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_loop_forever_never_stops_on_its_own(api: str) -> None:
    turns = await run(api, QUESTION, scenario="loop-forever", max_turns=5)
    assert calls_of(turns) == [[QUERY]] * 5


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_parallel_makes_two_calls_in_one_turn(api: str) -> None:
    turns = await run(api, QUESTION, scenario="parallel")
    assert calls_of(turns) == [[QUERY, CHART], []]
    assert len({c.id for c in turns[0].tool_calls}) == 2
    assert_final_answer(turns[-1])


@pytest.mark.anyio
@pytest.mark.parametrize("api", APIS)
async def test_parallel_off_spreads_the_calls_over_turns(api: str) -> None:
    turns = await run(api, QUESTION, scenario="parallel", parallel=False)
    assert calls_of(turns) == [[QUERY], [CHART], []]


@pytest.mark.anyio
async def test_tool_choice_none_skips_the_playbook() -> None:
    turns = await run("chat", QUESTION, tool_choice="none")
    assert calls_of(turns) == [[]] and "tool_choice is 'none'" in turns[0].text


def test_every_scenario_is_documented() -> None:
    assert set(SCENARIOS) == {"canonical", "ask-back", "bad-since", "unknown-tool", "loop-forever", "parallel"}
    assert all(s.summary for s in SCENARIOS.values())
