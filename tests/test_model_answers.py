"""The simulated model's honest side: answers as sentences from the results, arguments for tools nobody
here wrote, and a refusal the host can read when it cannot do the task."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from mcp_types import Tool

from labkit.host import Conversation, Host, ServerSpec
from labkit.lessons import make_client
from labkit.simulator import MODEL_NAME, Dialogue, decide
from labkit.simulator._dialogue import Message, ToolOutcome, ToolSeen, ToolSpec
from labkit.trace import Trace
from tests.servers_helpers import TIME_SERVER

REAL_TOOLS = Path(__file__).resolve().parents[1] / "labkit" / "lessons" / "data" / "real_server_tools.json"
_NO_JSON = re.compile(r"[{}\[\]]|\"\w+\":")


def _real(server: str) -> list[dict]:
    listed = json.loads(REAL_TOOLS.read_text(encoding="utf-8"))["servers"]
    return next(s["tools"] for s in listed if s["server"] == server)


def _spec(tool: dict) -> ToolSpec:
    return ToolSpec(tool["name"], tool.get("description", ""), tool["inputSchema"])


def _answer(question: str, *results: tuple[str, dict, object]) -> str:
    """The model's final text after one turn of calls (name, arguments, result) answered."""
    calls = tuple(ToolSeen(f"c{n}", name, args) for n, (name, args, _) in enumerate(results))
    outcomes = tuple(
        ToolOutcome(f"c{n}", r if isinstance(r, str) else json.dumps(r)) for n, (_, _, r) in enumerate(results)
    )
    decision = decide(
        Dialogue([Message("user", question), Message("assistant", calls=calls), Message("user", results=outcomes)])
    )
    assert not decision.calls and decision.text.startswith("[simulated] ")
    return decision.text


def test_a_plan_is_answered_in_a_sentence():
    plan = {"plan": "family", "max_accounts": 6, "monthly_price_cny": 38.0, "description": "One bill."}
    text = _answer("How many accounts does the family plan allow?", ("get_plan", {"plan": "family"}, plan))
    assert text == "[simulated] Your family plan allows up to 6 accounts. It costs 38.00 CNY a month."


def test_a_tool_the_model_does_not_know_has_its_fields_named_in_words():
    text = _answer("Look it up", ("get_x", {}, {"tier": "gold", "seats": 6, "owner": {"name": "Ana"}, "tags": [1, 2]}))
    assert text == "[simulated] `get_x` returned tier gold, seats 6, owner (name Ana), tags 2 items."
    assert not _NO_JSON.search(text.removeprefix("[simulated] "))


def test_a_long_result_is_cut_once_and_says_how_much_was_left_out():
    text = _answer("Look it up", ("get_x", {}, {"note": "word " * 100}))
    left_out = int(re.search(r"\(\+(\d+) characters\)", text).group(1))
    assert text.count("…") == 1 and left_out == len("note " + ("word " * 100).strip()) - 300


def _order(number: int, status: str, amount: float, created: str) -> dict:
    return {"id": f"SO-{number}", "customer": "c", "amount_cny": amount, "status": status, "created_at": created}


def test_the_weekly_report_counts_and_adds_up_the_week_asked_per_status():
    # 2026-W44 is 26 Oct – 1 Nov 2026; newest first, as query_orders returns them.
    pending = {
        "status": "pending",
        "limit": 3,
        "count": 3,
        "orders": [
            _order(1, "pending", 100.0, "2026-11-03T09:00"),
            _order(2, "pending", 250.5, "2026-10-28T10:00"),
            _order(3, "pending", 49.5, "2026-10-20T08:00"),
        ],
    }
    shipped = {
        "status": "shipped",
        "limit": 2,
        "count": 2,
        "orders": [_order(4, "shipped", 10.0, "2026-11-01T23:00"), _order(5, "shipped", 20.0, "2026-10-30T12:00")],
    }
    text = _answer(
        "Write the weekly order report for 2026-W44.",
        ("query_orders", {"status": "pending"}, pending),
        ("query_orders", {"status": "shipped"}, shipped),
    )
    assert text == (
        "[simulated] In 2026-W44: 1 pending order worth 250.50 CNY; 2 shipped orders worth 30.00 CNY. "
        "Note: the tool returned at most 2 shipped orders, so there may be more."
    )


def test_time_and_conversion_results_are_sentences():
    now = {"timezone": "Asia/Tokyo", "datetime": "2026-12-01T21:04:05+09:00", "day_of_week": "Tuesday", "is_dst": False}
    assert _answer("What time is it in Tokyo?", ("get_current_time", {"timezone": "Asia/Tokyo"}, now)) == (
        "[simulated] It is 21:04 in Asia/Tokyo (UTC+09:00)."
    )
    converted = {
        "source": {
            "timezone": "Europe/London",
            "datetime": "2026-12-01T09:30:00+00:00",
            "day_of_week": "Tuesday",
            "is_dst": False,
        },
        "target": {
            "timezone": "Asia/Tokyo",
            "datetime": "2026-12-01T18:30:00+09:00",
            "day_of_week": "Tuesday",
            "is_dst": False,
        },
        "time_difference": "+9.0h",
    }
    assert _answer("convert 9:30 in London to Tokyo time", ("convert_time", {}, converted)) == (
        "[simulated] 09:30 in Europe/London (UTC+00:00) is 18:30 on Tuesday in Asia/Tokyo (UTC+09:00), "
        "a difference of +9.0h."
    )


def test_errors_and_plain_text_results_are_quoted_as_the_tool_said_them():
    text = _answer(
        "How many accounts does the gold plan allow?",
        ("get_plan", {"plan": "gold"}, "Error: unknown plan 'gold'; valid plans: family, personal"),
    )
    assert text == "[simulated] `get_plan` reported an error: Error: unknown plan 'gold'; valid plans: family, personal"
    said = _answer("Which orders are waiting?", ("query_orders", {}, {"result": "2 pending order(s):\nSO-1025"}))
    assert said == "[simulated] `query_orders` said: 2 pending order(s): SO-1025"


@pytest.mark.parametrize(
    ("question", "name", "arguments"),
    [
        ("What time is it in Tokyo?", "get_current_time", {"timezone": "Asia/Tokyo"}),
        ("What time is it in America/New_York?", "get_current_time", {"timezone": "America/New_York"}),
        (
            "convert 9:30 in London to Tokyo time",
            "convert_time",
            {"source_timezone": "Europe/London", "time": "09:30", "target_timezone": "Asia/Tokyo"},
        ),
        (
            "Convert 9.30 pm from Europe/London to Asia/Tokyo",
            "convert_time",
            {"source_timezone": "Europe/London", "time": "21:30", "target_timezone": "Asia/Tokyo"},
        ),
    ],
)
def test_the_time_servers_arguments_come_from_the_question(question, name, arguments):
    decision = decide(Dialogue([Message("user", question)], [_spec(t) for t in _real("mcp-server-time")]))
    assert [(c.name, c.arguments) for c in decision.calls] == [(name, arguments)]


def test_two_cities_make_two_calls_in_one_turn():
    decision = decide(
        Dialogue(
            [Message("user", "What time is it in Tokyo and in Paris?")], [_spec(t) for t in _real("mcp-server-time")]
        )
    )
    assert [c.arguments for c in decision.calls] == [{"timezone": "Asia/Tokyo"}, {"timezone": "Europe/Paris"}]


def test_a_read_question_never_calls_a_write_tool():
    git = [_spec(t) for t in _real("mcp-server-git")]
    only_commit = decide(
        Dialogue([Message("user", "What changed in my repository?")], [t for t in git if t.name == "git_commit"])
    )
    assert only_commit.declined and not only_commit.calls and "`git_commit`" in only_commit.text
    all_tools = decide(Dialogue([Message("user", "What changed in my repository?")], git))
    assert all_tools.declined and not all_tools.calls  # of all twelve, only git_commit shares a word
    unstaged = decide(Dialogue([Message("user", "Which changes are not yet staged?")], git))
    assert not unstaged.declined and "I could use `git_diff_" in unstaged.text and "repo_path" in unstaged.text
    asked_to_write = decide(
        Dialogue(
            [Message("user", "Commit my changes in repo_path=/tmp/r with message='fix'")],
            [t for t in git if t.name == "git_commit"],
        )
    )
    assert [c.name for c in asked_to_write.calls] == ["git_commit"]


@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_a_refusal_travels_in_each_apis_own_field(api):
    """Through the real SDK clients: Anthropic stop_reason, a Chat `refusal`, a Responses refusal part."""
    commit = Tool.model_validate(next(t for t in _real("mcp-server-git") if t["name"] == "git_commit"))
    provider = "anthropic" if api == "anthropic" else "openai"
    conversation = Conversation(make_client(provider, trace=Trace()), MODEL_NAME, [commit], api=api)
    conversation.add_user("What changed in my repository?")
    turn = await conversation.ask()
    assert turn.declined and not turn.tool_calls and "cannot answer" in turn.text
    if api == "anthropic":
        assert turn.stop_reason == "refusal"
    elif api == "chat":
        assert turn.raw.choices[0].message.refusal == turn.text and turn.raw.choices[0].message.content is None
    else:
        assert [p.type for p in turn.raw.output[0].content] == ["refusal"]


async def _run_time(question: str) -> tuple[object, Trace]:
    trace = Trace()
    spec = ServerSpec("time", command=TIME_SERVER, args=("--local-timezone", "UTC"))
    with anyio.fail_after(60):
        async with Host(trace, [spec]) as host:
            conversation = Conversation(make_client("anthropic", trace=trace), MODEL_NAME, host.tools)
            result = await host.run(question, conversation)
    return result, trace


async def test_what_time_is_it_in_tokyo_against_the_real_time_server():
    result, trace = await _run_time("What time is it in Tokyo?")
    (call,) = [e for e in trace.of_kind("jsonrpc.request") if e.name == "get_current_time"]
    assert call.payload["params"]["arguments"] == {"timezone": "Asia/Tokyo"}
    assert result.delivered and re.fullmatch(
        r"\[simulated\] It is \d\d:\d\d in Asia/Tokyo \(UTC\+09:00\)\.", result.answer
    ), result.answer


async def test_a_conversion_against_the_real_time_server():
    result, trace = await _run_time("convert 9:30 in London to Tokyo time")
    (call,) = [e for e in trace.of_kind("jsonrpc.request") if e.name == "convert_time"]
    assert call.payload["params"]["arguments"] == {
        "source_timezone": "Europe/London",
        "time": "09:30",
        "target_timezone": "Asia/Tokyo",
    }
    assert re.fullmatch(
        r"\[simulated\] 09:30 in Europe/London \(UTC\+0[01]:00\) is \d\d:30 on \w+ in Asia/Tokyo "
        r"\(UTC\+09:00\), a difference of \+[89]\.0h\.",
        result.answer,
    ), result.answer


async def test_the_plans_server_through_the_host_answers_in_a_sentence():
    trace = Trace()
    with anyio.fail_after(60):
        async with Host(trace, [ServerSpec("plans")]) as host:
            conversation = Conversation(make_client("openai", trace=trace), MODEL_NAME, host.tools, api="chat")
            result = await host.run("How many accounts do the family and personal plans allow?", conversation)
    assert result.delivered and result.answer == (
        "[simulated] Your family plan allows up to 6 accounts. It costs 38.00 CNY a month. "
        "Your personal plan allows up to 3 accounts. It costs 18.00 CNY a month."
    )
