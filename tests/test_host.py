"""The host and the canonical run: real servers, real SDK clients, the simulated model; steps derived from the trace."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from labkit.host import Conversation, GatePolicy, Host, ServerSpec, ToolCall
from labkit.lessons import make_client, run_scenario
from labkit.trace import Trace


@pytest.fixture(scope="module")
async def canonical():
    return await run_scenario("canonical")


def _frames(run, kind, name=None):
    return [e for e in run.trace.of_kind(kind) if name is None or e.name == name]


async def test_canonical_run_gives_19_steps_9_4_3_2_1(canonical):
    assert canonical.result.delivered, canonical.result.reason
    assert len(canonical.steps) == 19
    assert canonical.counts == {"host": 9, "server": 4, "model": 3, "user": 2, "system": 1}
    assert [s.n for s in canonical.steps] == list(range(1, 20))


async def test_canonical_saves_the_chart_in_the_personal_space(canonical):
    result = _frames(canonical, "jsonrpc.response", "render_error_trend")[-1].payload["result"]
    path = Path(os.environ["LABKIT_DATA_DIR"]) / result["structuredContent"]["path"]
    assert result["structuredContent"]["space"] == "personal"
    assert path.parent.name == "personal" and path.read_bytes()[:4] == b"\x89PNG"


async def test_retry_has_a_new_id_and_the_byte_identical_request_state(canonical):
    calls = _frames(canonical, "jsonrpc.request", "render_error_trend")
    first_reply = _frames(canonical, "jsonrpc.response", "render_error_trend")[0]
    state = first_reply.payload["result"]["requestState"]
    assert len(calls) == 2 and calls[1].ref != calls[0].ref
    assert calls[1].payload["params"]["requestState"] == state
    assert calls[1].payload["params"]["inputResponses"]["space"]["content"] == {"space": "personal"}


async def test_final_answer_quotes_numbers_from_the_log_store(canonical):
    data = Path(os.environ["LABKIT_DATA_DIR"])
    database = next(data.rglob("*.sqlite*"))
    with sqlite3.connect(database) as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
    report = _frames(canonical, "jsonrpc.response", "query_errors")[-1].payload["result"]["structuredContent"]
    numbers = set(re.findall(r"\d+", canonical.result.answer))
    assert str(report["total"]) in numbers and str(report["peak_errors"]) in numbers
    assert tables, "the log store is a real SQLite database"


async def test_the_legacy_era_uses_initialize_and_elicitation_create():
    run = await run_scenario("canonical", era="2025-11-25")
    methods = {e.payload.get("method") for e in run.trace.of_kind("jsonrpc.request")}
    assert {"initialize", "elicitation/create"} <= methods and "server/discover" not in methods
    assert run.result.delivered


async def test_ask_back_asks_before_any_tool_call_and_counts_change(canonical):
    run = await run_scenario("ask-back")
    first_call = _frames(run, "jsonrpc.request", "query_errors")[0].seq
    relay = run.trace.of_kind("host.relay")[0]
    answer = next(e for e in run.trace.of_kind("user.answer") if e.seq > relay.seq)
    assert relay.seq < answer.seq < first_call
    assert run.counts["user"] == canonical.counts["user"] + 1
    assert run.counts["model"] == canonical.counts["model"] + 1
    assert run.result.delivered


async def test_bad_since_is_an_execution_error_the_model_repairs():
    run = await run_scenario("bad-since")
    replies = [e.payload["result"] for e in _frames(run, "jsonrpc.response", "query_errors")]
    assert replies[0]["isError"] is True and "2026-10-29T20:00" in replies[0]["content"][0]["text"]
    assert replies[1]["isError"] is False
    assert run.result.delivered


async def test_an_unlisted_tool_is_refused_with_the_list_of_tools():
    run = await run_scenario("unknown-tool")
    refused = [e for e in run.trace.of_kind("host.gate") if e.meta.get("by") == "tool list"]
    assert refused and refused[0].meta["outcome"] == "blocked"
    assert not run.trace.of_kind("jsonrpc.error")
    told = str(next(e for e in run.trace.of_kind("model.request") if e.seq > refused[0].seq).payload["body"])
    assert "query_error_logs" in told and "query_errors" in told
    assert run.result.delivered


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_the_same_host_drives_the_openai_apis(api, canonical):
    run = await run_scenario("canonical", api=api)
    assert run.result.delivered and run.counts == canonical.counts
    paths = {e.payload["path"] for e in run.trace.of_kind("model.request")}
    assert paths == {"/v1/chat/completions" if api == "chat" else "/v1/responses"}


async def _host_call(call: ToolCall, policy: GatePolicy = GatePolicy(), **host_options):
    trace = Trace()
    async with Host(
        trace, [ServerSpec("logs"), ServerSpec("charts"), ServerSpec("faulty")], policy=policy, **host_options
    ) as host:
        return trace, host, await host.router.execute(call)


async def test_the_gate_keeps_invalid_arguments_from_the_server():
    trace, host, result = await _host_call(ToolCall("c1", "query_errors", {"service": 42}))
    assert result.is_error and "schema" in result.text
    assert not [e for e in trace.of_kind("jsonrpc.request") if e.name == "query_errors"]
    assert host.audit.entries[-1].decision == "blocked"


async def test_a_tool_that_writes_is_not_called_without_approval():
    call = ToolCall(
        "c1", "render_error_trend", {"service": "order-service", "since": "2026-10-29T20:00", "approved": True}
    )
    trace, _host, result = await _host_call(call)
    assert result.is_error and "did not approve" in result.text
    gate = trace.of_kind("host.gate")[-1]
    assert gate.meta["ignored"] == ["approved"]
    assert not [e for e in trace.of_kind("jsonrpc.request") if e.name == "render_error_trend"]


async def test_a_hung_tool_becomes_an_error_when_the_host_stops_waiting():
    # The tool sleeps 60 s: an error before its answer is the host's limit at work, however long a busy machine took.
    policy = GatePolicy(auto_approve=frozenset({"sleep_for"}))
    trace, host, result = await _host_call(ToolCall("c1", "sleep_for", {"seconds": 60}), policy, call_timeout=1.0)
    assert result.is_error and host.audit.entries[-1].outcome == "timeout"
    assert not [e for e in trace.of_kind("jsonrpc.response") if e.name == "sleep_for"]


async def test_the_round_cap_stops_a_model_that_never_stops():
    trace = Trace()
    client = make_client("anthropic", trace=trace, scenario="loop-forever")
    async with Host(trace, [ServerSpec("logs")], round_cap=3, required_tools=("query_errors",)) as host:
        result = await host.run(
            "Why did order-service errors rise last night?",
            Conversation(client, "teaching-model-SIMULATED", host.tools),
        )
    assert not result.delivered and "3 rounds" in result.reason
    assert len(trace.of_kind("model.request")) == 3


async def test_a_turns_independent_calls_are_on_the_wire_at_the_same_time():
    from labkit.host import scripted_form
    from labkit.trace import call_spans

    trace = Trace()
    servers = [ServerSpec("logs"), ServerSpec("charts")]
    policy = GatePolicy(auto_approve=frozenset({"render_error_trend"}))
    async with Host(
        trace,
        servers,
        policy=policy,
        elicit=scripted_form({"space": "personal"}),
        required_tools=("query_errors", "render_error_trend"),
    ) as host:
        client = make_client("anthropic", trace=trace, scenario="parallel")
        conversation = Conversation(client, "teaching-model-SIMULATED", host.tools)
        result = await host.run("Why did order-service errors rise last night? Make a trend chart.", conversation)
    assert result.delivered, result.reason
    [query] = [e for e in trace.of_kind("jsonrpc.response") if e.name == "query_errors"]
    chart_sent = next(e for e in trace.of_kind("jsonrpc.request") if e.name == "render_error_trend")
    assert chart_sent.seq < query.seq, "the chart call waited for query_errors to be answered"
    proposed = [
        b["id"] for b in trace.of_kind("model.response")[0].payload["body"]["content"] if b["type"] == "tool_use"
    ]
    written_back = [r["call_id"] for r in trace.of_kind("host.writeback")[0].payload]
    assert written_back == proposed, "results go back in the order the model proposed the calls"
    assert {span.tool for span in call_spans(trace) if span.round == 1} == {"query_errors", "render_error_trend"}
