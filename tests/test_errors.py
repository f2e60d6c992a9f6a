"""Notebook 05 against real servers: execution vs protocol errors, a hang, a crash, a flood, a loop, the taxonomy."""

from __future__ import annotations

import json
from typing import Any

import mcp_types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import TypeAdapter

from labkit.host import (
    Conversation,
    GatePolicy,
    Host,
    ServerSpec,
    ToolCall,
    http_server,
    http_transport,
    stdio_transport,
)
from labkit.lessons import classify, failure_table, make_client, run_scenario, tool_results_sent
from labkit.simulator import MODEL_NAME
from labkit.trace import Trace

FAULTY = GatePolicy(auto_approve=frozenset({"sleep_for", "crash_now", "huge_result", "raise_error"}))
RawRequest = mcp_types.Request[dict[str, Any], str]
TIMEOUT = 1.0


async def _faulty_run(question: str, **options: Any) -> tuple[Trace, Any, Any, list[str]]:
    """The simulated model asks for one faulty tool through a real host; then the host calls the server again. Also
    each call's outcome, as the host's audit log recorded it."""
    trace = Trace()
    async with Host(trace, [ServerSpec("faulty")], policy=FAULTY, **options) as host:
        conversation = Conversation(make_client("anthropic", trace=trace, scenario="none"), MODEL_NAME, host.tools)
        result = await host.run(question, conversation)
        after = await host.router.execute(ToolCall("after", "sleep_for", {"seconds": 0}))
    return trace, result, after, [entry.outcome for entry in host.audit.entries]


def _told(trace: Trace, after_seq: int) -> Any:
    return next(e for e in trace.of_kind("model.request") if e.seq > after_seq)


def _sent(trace: Trace, tool: str) -> Any:
    return next(e for e in trace if e.kind == "jsonrpc.request" and e.name == tool)


@pytest.fixture(scope="module")
async def hang():
    return await _faulty_run("Call sleep_for with seconds=30.", call_timeout=TIMEOUT)


@pytest.fixture(scope="module")
async def crash():
    return await _faulty_run("Use crash_now to crash the faulty server.")


@pytest.fixture(scope="module")
async def flood():
    return await _faulty_run("Call huge_result with kilobytes=64.", max_result_chars=2000)


@pytest.fixture(scope="module")
async def loop():
    trace = Trace()
    client = make_client("anthropic", trace=trace, scenario="loop-forever")
    async with Host(trace, [ServerSpec("logs")], round_cap=4, required_tools=("query_errors",)) as host:
        result = await host.run(
            "Why did order-service errors rise last night?", Conversation(client, MODEL_NAME, host.tools)
        )
    return trace, result


@pytest.fixture(scope="module")
async def protocol_probes():
    probes = {
        "unknown method": RawRequest(method="tools/destroy", params={}),
        "invalid params": RawRequest(method="tools/call", params={"name": "query_errors", "arguments": ["x"]}),
    }
    traces, errors = {}, {}
    with http_server("logs") as url:
        for label, request in probes.items():
            traces[label] = Trace()
            async with Client(http_transport(url, traces[label], server="logs")) as logs:
                with pytest.raises(MCPError) as raised:
                    await logs.session.send_request(request, TypeAdapter(dict[str, Any]))
                errors[label] = raised.value.error
    return traces, errors


async def test_an_execution_error_reaches_the_model_verbatim_and_the_model_repairs_its_arguments():
    run = await run_scenario("bad-since")
    replies = [e for e in run.trace if e.kind == "jsonrpc.response" and e.name == "query_errors"]
    text = replies[0].payload["result"]["content"][0]["text"]
    assert replies[0].payload["result"]["isError"] is True and "2026-10-29T20:00" in text
    told = _told(run.trace, replies[0].seq)
    assert text in tool_results_sent(told)[0] and '"is_error": true' in json.dumps(told.payload["body"])
    calls = [
        e.payload["params"]["arguments"]["since"]
        for e in run.trace
        if e.kind == "jsonrpc.request" and e.name == "query_errors"
    ]
    assert calls[:2] == ["last night", "2026-10-29T20:00"] and replies[1].payload["result"]["isError"] is False
    assert run.result.delivered


async def test_a_business_rule_is_an_execution_error_and_call_tool_does_not_raise():
    async with Client(stdio_transport("logs", Trace())) as logs:
        month = await logs.call_tool("query_errors", {"service": "order-service", "since": "2026-10-01T00:00"})
    assert month.is_error and "at most 7 days" in month.content[0].text


async def test_an_unknown_tool_is_refused_by_the_host_before_any_server_sees_it():
    run = await run_scenario("unknown-tool")
    refused = next(e for e in run.trace.of_kind("host.gate") if e.name == "query_error_logs")
    assert (refused.meta["outcome"], refused.meta["by"]) == ("blocked", "tool list")
    calls = [
        e.payload["params"]["name"]
        for e in run.trace.of_kind("jsonrpc.request")
        if e.payload.get("method") == "tools/call"
    ]
    assert "query_error_logs" not in calls and not run.trace.of_kind("jsonrpc.error")
    told = _told(run.trace, refused.seq)
    assert "query_errors" in tool_results_sent(told)[0]
    assert run.result.delivered


async def test_a_bare_client_still_gets_the_servers_unknown_tool_error():
    async with Client(stdio_transport("logs", Trace())) as logs:
        with pytest.raises(MCPError) as raised:
            await logs.call_tool("query_error_logs", {})
    assert (raised.value.error.code, raised.value.error.message) == (-32602, "Unknown tool: query_error_logs")


async def test_an_unknown_method_and_invalid_params_are_protocol_errors_with_http_statuses(protocol_probes):
    traces, errors = protocol_probes
    assert (errors["unknown method"].code, errors["unknown method"].message) == (-32601, "Method not found")
    assert (errors["invalid params"].code, errors["invalid params"].message) == (-32602, "Invalid request parameters")
    statuses = {
        label: [e.meta["status"] for e in trace if e.kind == "http.response"][-1] for label, trace in traces.items()
    }
    assert statuses == {"unknown method": 404, "invalid params": 400}


async def test_a_hung_tool_is_an_error_the_model_sees_once_the_host_stops_waiting(hang):
    # What the host did, in order, read from the trace and its audit log (never how long it took: a busy machine
    # moves the limit on while the server works).
    trace, _result, after, outcomes = hang
    sent = _sent(trace, "sleep_for")
    told = _told(trace, sent.seq)
    (cancelled,) = [e for e in trace if e.name == "notifications/cancelled"]
    assert outcomes[0] == "timeout" and sent.seq < cancelled.seq < told.seq
    assert not [e for e in trace if e.kind == "jsonrpc.response" and e.ref == sent.ref and e.seq < told.seq]
    assert tool_results_sent(told)[0].startswith("The host") and '"is_error": true' in json.dumps(told.payload["body"])
    assert cancelled.src == "client" and cancelled.payload["params"]["requestId"] == sent.ref
    assert after.text == "slept 0 s" and not after.is_error  # the same server answers the next call
    assert not trace.of_kind("host.restart")


async def test_a_crashed_server_is_reported_restarted_once_and_the_next_call_works(crash):
    trace, result, after, outcomes = crash
    sent = _sent(trace, "crash_now")
    closed = trace.of_kind("transport.closed")[0]
    (restart,), handled = trace.of_kind("host.restart"), trace.of_kind("host.error")[0]
    told = _told(trace, sent.seq)
    # The host notices the closed transport itself (no answer and no time limit ended the call), restarts once, and
    # only then tells the model.
    assert sent.seq < closed.seq < told.seq and sent.seq < restart.seq < told.seq and handled.seq < told.seq
    assert "timeout" not in outcomes and not [e for e in trace if e.name == "notifications/cancelled"]
    assert "restarted" in tool_results_sent(told)[0]
    assert result.delivered and after.text == "slept 0 s"  # no exception escaped; the new process answers


async def test_an_oversized_result_is_cut_before_the_model_with_a_visible_marker(flood):
    trace, _result, _, _ = flood
    reply = next(e for e in trace if e.kind == "jsonrpc.response" and e.name == "huge_result")
    shown = tool_results_sent(_told(trace, reply.seq))[0]
    assert len(reply.payload["result"]["content"][0]["text"]) == 64 * 1024
    assert shown.endswith("[truncated by the host: 2000 of 65536 characters shown]") and len(shown) < 2100


async def test_the_round_cap_stops_a_model_that_never_stops(loop):
    trace, result = loop
    assert not result.delivered and result.reason == "stopped after 4 rounds: the model kept calling tools"
    assert len(trace.of_kind("model.request")) == 4 and trace.of_kind("host.stop")[0].dst == "user"


async def test_the_taxonomy_is_built_from_the_runs(hang, crash, flood, loop, protocol_probes):
    run = await run_scenario("bad-since")
    runs = {
        "bad since": run.trace,
        "hung": hang[0],
        "crash": crash[0],
        "flood": flood[0],
        "loop": loop[0],
        **protocol_probes[0],
    }
    table = failure_table(runs)
    assert table["kind"].to_dict() == {
        "bad since": "execution error",
        "hung": "timeout",
        "crash": "crash",
        "flood": "oversized result",
        "loop": "endless loop",
        "unknown method": "unknown method",
        "invalid params": "invalid params",
    }
    assert table.loc["bad since", "who sees it"] == "the model: the server's own words"
    assert "retry succeeded" in table.loc["bad since", "who can fix it"]
    assert "(HTTP 404)" in table.loc["unknown method", "wire shape"]
    assert table.loc["hung", "wire shape"].startswith("no reply; the client sent notifications/cancelled for id")
    assert table.loc["flood", "wire shape"].startswith("result of 65,536 characters")
    assert table.loc["flood", "what the model sees"].startswith("2,000 characters, then the marker")
    assert table.loc["loop", "what the model sees"] == "nothing more: the host stops asking it"
    assert table.loc["unknown method", "what the model sees"] == "nothing: no model in this run"
    with pytest.raises(ValueError, match="no failure"):
        classify("healthy", Trace())


async def test_the_taxonomy_tells_the_hosts_refusal_of_an_unlisted_tool_from_the_servers_unknown_tool():
    refused = await run_scenario("unknown-tool")
    bare = Trace()
    async with Client(stdio_transport("logs", bare)) as logs:
        with pytest.raises(MCPError):
            await logs.call_tool("query_error_logs", {})
    table = failure_table({"host": refused.trace, "server": bare})
    assert table["kind"].to_dict() == {"host": "unlisted tool", "server": "unknown tool"}
    assert table.loc["host", "wire shape"].endswith("tools/call sent for it: 0")
    assert table.loc["host", "what the model sees"].startswith("The host did not run query_error_logs")
    assert table.loc["server", "wire shape"] == "error -32602 'Unknown tool: query_error_logs'"


async def test_an_http_crash_is_classified_as_a_crash_from_the_unanswered_request():
    trace = Trace()
    async with Host(trace, [ServerSpec("faulty", transport="http")], policy=FAULTY) as host:
        await host.call("crash_now")
    row = classify("http crash", trace)
    assert row.kind == "crash" and row.wire == "no reply; the HTTP request 'POST /mcp tools/call' got no response"
