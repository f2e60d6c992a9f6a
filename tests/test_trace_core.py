"""The trace core against a real server: wire tap over stdio, HTTP and memory, both eras, and the views."""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pandas as pd
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp_types import ElicitResult

from labkit.host import (
    ServerStartError,
    http_server,
    http_transport,
    memory_transport,
    stdio_params,
    stdio_transport,
)
from labkit.processes import ServerEnded
from labkit.trace import TappedTransport, Trace, pretty, save_png, select, sequence_diagram, table
from tests.toy_server import build_server

TOY = "tests.toy_server"


async def _answer_team(context, params):
    return ElicitResult(action="accept", content={"space": "team"})


async def _exchange(transport, mode: str) -> None:
    async with Client(transport, mode=mode, elicitation_callback=_answer_team) as client:
        await client.list_tools()
        assert (await client.call_tool("add", {"a": 2, "b": 3})).structured_content == {"result": 5}
        saved = await client.call_tool("save", {"text": "note"})
        assert saved.content[0].text == "saved note to team"


@pytest.fixture(scope="module")
def toy_url():
    with http_server(TOY) as url:
        yield url


@pytest.fixture(params=["stdio", "http", "memory"])
def transport_kind(request):
    return request.param


def _transport(kind: str, trace: Trace, url: str):
    if kind == "stdio":
        return stdio_transport(TOY, trace)
    if kind == "http":
        return http_transport(url, trace, server="toy")
    return memory_transport(build_server(), trace)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_every_frame_is_recorded_paired_and_stamped_with_its_era(transport_kind, mode, toy_url):
    trace = Trace()
    await _exchange(_transport(transport_kind, trace, toy_url), mode)
    frames = select(trace, kinds=["jsonrpc."])
    methods = [e.payload.get("method") for e in frames]
    if mode == "legacy":
        assert "initialize" in methods and "server/discover" not in methods
        assert "elicitation/create" in methods
        assert {e.meta["era"] for e in frames} == {"2025-11-25"}
    else:
        assert "server/discover" in methods and "initialize" not in methods
        assert {e.meta["era"] for e in frames} == {"2026-07-28"}
    requests = [e for e in frames if e.kind == "jsonrpc.request"]
    replies = [e for e in frames if e.kind in ("jsonrpc.response", "jsonrpc.error")]
    # ids are unique per sender, and every request has exactly one reply with its id and name
    for sender in ("client", "server"):
        ids = Counter(e.ref for e in requests if e.src == sender)
        assert all(n == 1 for n in ids.values()), ids
    for request in requests:
        matching = [r for r in replies if r.ref == request.ref and r.dst == request.src]
        assert len(matching) == 1, request
        assert matching[0].name == request.name and matching[0].seq > request.seq


async def test_http_tap_records_status_codes_and_mcp_headers(toy_url):
    trace = Trace()
    await _exchange(http_transport(toy_url, trace, server="toy"), "auto")
    posts = select(trace, kinds=["http.request"], http=True)
    statuses = {e.payload["status"] for e in select(trace, kinds=["http.response"], http=True)}
    assert statuses == {200}
    calls = [e.payload["headers"] for e in posts if e.payload["headers"].get("mcp-method") == "tools/call"]
    assert calls and all(h["mcp-protocol-version"] == "2026-07-28" for h in calls)
    assert {h["mcp-name"] for h in calls} == {"add", "save"}
    assert not select(trace, kinds=["http."]), "HTTP events are hidden from the default views"


async def test_retry_after_input_required_has_new_id_and_identical_state():
    trace = Trace()
    await _exchange(stdio_transport(TOY, trace), "auto")
    saves = [e for e in trace.of_kind("jsonrpc.request") if e.name == "save"]
    first_reply = next(e for e in trace.of_kind("jsonrpc.response") if e.ref == saves[0].ref)
    assert first_reply.payload["result"]["resultType"] == "input_required"
    assert saves[1].ref != saves[0].ref
    assert saves[1].payload["params"]["requestState"] == first_reply.payload["result"]["requestState"]


async def test_a_line_that_is_not_json_is_recorded_and_the_session_goes_on(tmp_path):
    # The SDK guards a server's stdout, so the garbage comes from a shell in front of the server.
    params = stdio_params(TOY)
    params.args = ["-c", f"echo 'this line is not JSON'; exec {sys.executable} -m {TOY}"]
    params.command = "sh"
    trace = Trace()
    with open(tmp_path / "stderr.txt", "w+") as errlog:
        async with Client(TappedTransport(stdio_client(params, errlog=errlog), trace, server="toy")) as client:
            assert (await client.call_tool("add", {"a": 1, "b": 1})).structured_content == {"result": 2}
    errors = trace.of_kind("transport.error")
    assert len(errors) == 1 and "this line is not JSON" in errors[0].summary
    assert errors[0].seq < trace.of_kind("jsonrpc.response")[0].seq


async def test_a_server_that_dies_mid_call_is_recorded_and_its_end_is_one_value():
    trace = Trace()
    with pytest.raises(ServerEnded) as died:
        async with Client(stdio_transport(TOY, trace)) as client:
            await client.call_tool("die", {})
    end = died.value.end
    assert (end.server, end.why, end.returncode, end.limit_hit) == (TOY, "exited", 3, None)
    assert end.lines > 0, "it had answered the handshake: it ended mid-session, it did not fail to start"
    assert not isinstance(died.value, ServerStartError) and "exit status 3" in str(died.value)
    call = next(e for e in trace.of_kind("jsonrpc.request") if e.name == "die")
    assert not [e for e in trace.of_kind("jsonrpc.response") if e.ref == call.ref]
    assert trace.of_kind("transport.closed"), [e.kind for e in trace]


async def test_json_round_trip_is_lossless(tmp_path):
    trace = Trace()
    await _exchange(stdio_transport(TOY, trace), "legacy")
    trace.record("host", "host", "host.gate", "allowed", ref="x", note="a \u2603 snowman")
    again = Trace.load(trace.save(tmp_path / "trace.json"))
    assert again.events == trace.events
    assert again.to_json() == trace.to_json()


async def test_table_and_diagram_follow_recorded_order(tmp_path):
    trace = Trace()
    await _exchange(stdio_transport(TOY, trace), "auto")
    trace.record("host", "host", "host.gate", "a; note with # and <tags>")
    frame = table(trace)
    assert list(frame.columns) == ["round", "from", "to", "kind", "summary", "name", "server", "id"]
    shown = frame._repr_html_()
    assert "<th>from → to</th>" in shown and f"<th>{trace.events[-1].seq}</th>" in shown
    # a wide table scrolls in a box of its own, styled inline (a stored output loses its <style>)
    box = re.search(r"<div [^>]*style='([^']*)'><table class='dataframe labkit-events'>.*</table></div>", shown)
    assert box and "overflow-x: auto" in box[1], shown
    derived = frame[["from", "to"]]  # a DataFrame without the event layout that keeps the learner's headings
    assert isinstance(derived, pd.DataFrame) and "from → to" not in derived._repr_html_()
    assert "<th title='from'>" not in derived._repr_html_() and "<th>from</th>" in derived._repr_html_()
    assert list(frame.index) == [e.seq for e in trace]
    source = sequence_diagram(trace).source
    assert source.splitlines()[1] == "sequenceDiagram"
    assert "participant client as MCP client" in source and "participant server as MCP server" in source
    arrows = re.findall(r"^\s+(\w+)(-->>|->>)(\w+): \[(\d+)\]", source, flags=re.M)
    expected = [(e.src, "-->>" if e.is_reply else "->>", e.dst, str(e.seq)) for e in trace if e.src != e.dst]
    assert arrows == expected
    assert "Note over host: [" in source and ";" not in source.split("Note over host:")[1].split("#59;")[0]
    bundle = sequence_diagram(trace)._repr_mimebundle_()
    assert set(bundle) == {"text/markdown", "text/plain", "image/png"}  # a picture for viewers without Mermaid
    png = save_png(trace, tmp_path / "d.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


async def test_pretty_folds_long_strings_but_the_payload_keeps_them():
    trace = Trace()
    await _exchange(stdio_transport(TOY, trace), "auto")
    reply = next(e for e in trace.of_kind("jsonrpc.response") if "requestState" in json.dumps(e.payload))
    state = reply.payload["result"]["requestState"]
    shown = pretty(reply, limit=40)
    assert state not in shown and "chars)…" in shown
    assert len(state) > 40


def test_call_spans_pair_requests_and_responses_and_overlap_saving_reads_them():
    from labkit.trace import CallSpan, call_spans, overlap_saving

    trace = Trace()
    trace.round = 1
    for server in ("a", "b"):
        trace.record(
            "client",
            "server",
            "jsonrpc.request",
            "call",
            ref=1,
            name=f"tool_{server}",
            payload={"method": "tools/call"},
            server=server,
        )
    trace.record(
        "client",
        "server",
        "jsonrpc.request",
        "list",
        ref=2,
        name="tools/list",
        payload={"method": "tools/list"},
        server="a",
    )
    for server in ("b", "a"):
        trace.record("server", "client", "jsonrpc.response", "done", ref=1, name=f"tool_{server}", server=server)
    spans = call_spans(trace)
    assert [(s.server, s.tool) for s in spans] == [("a", "tool_a"), ("b", "tool_b")]
    assert all(s.answered >= s.sent for s in spans)
    one_after_another = [CallSpan(1, "a", "x", 0.0, 1.0), CallSpan(1, "a", "y", 1.0, 3.0)]
    together = [CallSpan(1, "a", "x", 0.0, 1.0), CallSpan(1, "b", "y", 0.0, 2.0)]
    with_a_gap = [CallSpan(1, "a", "x", 0.0, 1.0), CallSpan(1, "a", "y", 5.0, 6.0)]
    together = [CallSpan(1, "a", "x", 0.0, 1.0), CallSpan(1, "b", "y", 0.0, 2.0)]
    # A form answered between two calls is a gap, not time lost: one call overlapped the first, one came later.
    overlapped_then_later = [
        CallSpan(1, "a", "q", 0.0, 10.0),
        CallSpan(1, "b", "c", 5.0, 6.0),
        CallSpan(1, "b", "c", 20.0, 500.0),
    ]
    assert overlap_saving(one_after_another) == overlap_saving(with_a_gap) == {1: 0.0}
    assert overlap_saving(together) == {1: 1.0}
    assert overlap_saving(overlapped_then_later) == {1: 1.0}


def test_a_kind_filter_that_matches_no_kind_names_the_kind_it_may_mean():
    trace = Trace()
    trace.round = 1
    trace.record("host", "host", "host.gate", "gate query_orders: allowed", name="query_orders")
    assert [e.kind for e in select(trace, kinds=["host.gate"])] == ["host.gate"]
    assert select(trace, kinds=["jsonrpc."]) == []  # a real kind this run did not record: an empty table
    # Notebook 08 filtered on "gate": no kind starts with it, and the table silently lost the gate's row.
    with pytest.raises(ValueError, match=r"'gate'.*did you mean 'host\.gate'"):
        select(trace, kinds=["jsonrpc.request", "gate"])
    with pytest.raises(ValueError, match="'nothing'"):
        table(trace, kinds=["nothing"])


@asynccontextmanager
async def _no_frames() -> AsyncIterator[tuple[Any, Any]]:
    send, receive = anyio.create_memory_object_stream[Any](1)
    async with send, receive:
        yield receive, send


async def test_a_server_events_line_written_in_two_parts_is_recorded_once_whole(tmp_path) -> None:
    # The tap holds the events file open and reads what is new at each frame: a line cut by a frame is kept for later.
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({"src": "server", "dst": "system", "kind": "server.query", "summary": "old"}) + "\n")
    tap = TappedTransport(_no_frames(), Trace(), server="logs", server_events=events)
    line = json.dumps({"src": "server", "dst": "system", "kind": "server.query", "summary": "asks the store"}) + "\n"
    async with tap:  # what an earlier connection's server wrote is not news
        with events.open("a") as server:
            server.write(line[:20])
            server.flush()
            tap.record_server_events()
            assert len(tap.trace) == 0
            server.write(line[20:])
            server.flush()
            tap.record_server_events()
    assert [(e.kind, e.summary) for e in tap.trace] == [("server.query", "asks the store")]
