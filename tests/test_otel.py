"""The OpenTelemetry export: runs saved as OTLP/JSON, read back, and checked span by span.

The conversion is pure logic, so most tests read the canonical run as `tests/test_golden.py` keeps it recorded
(and checks against a live run); two runs stay live: a protocol error on the wire, and the older era over HTTP.
"""

from __future__ import annotations

import json
import re

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from labkit.host import stdio_transport
from labkit.lessons import run_scenario
from labkit.trace import Trace, export_otlp, save_otlp, to_otlp
from tests.recorded import canonical_trace

START = 1_793_318_400_000_000_000  # 2026-10-30T00:00:00Z, so the file is the same on every run


@pytest.fixture(scope="module")
def canonical() -> Trace:
    return canonical_trace()


def _model(trace: Trace) -> str:
    return trace.of_kind("model.request")[0].payload["body"]["model"]


def _spans(document):
    (resource,) = document["resourceSpans"]
    (scope,) = resource["scopeSpans"]
    return scope["spans"]


def _attrs(item):
    return {a["key"]: next(iter(a["value"].values())) for a in item["attributes"]}


def _read_back(trace, tmp_path):
    path = save_otlp(trace, tmp_path / "spans.json", start_unix_nano=START)
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_file_has_the_otlp_json_shape(canonical, tmp_path):
    document = _read_back(canonical, tmp_path)
    resource = document["resourceSpans"][0]["resource"]
    assert _attrs(resource) == {"service.name": "labkit-host"}
    spans = _spans(document)
    trace_ids = {s["traceId"] for s in spans}
    assert len(trace_ids) == 1 and re.fullmatch(r"[0-9a-f]{32}", trace_ids.pop())
    assert len({s["spanId"] for s in spans}) == len(spans)
    for span in spans:
        assert re.fullmatch(r"[0-9a-f]{16}", span["spanId"])
        assert span["kind"] in (1, 2, 3) and span["name"]
        start, end = int(span["startTimeUnixNano"]), int(span["endTimeUnixNano"])
        assert START <= start <= end, span["name"]
        assert all(set(a) == {"key", "value"} and len(a["value"]) == 1 for a in span["attributes"])


def test_one_root_holds_every_span(canonical, tmp_path):
    spans = _spans(_read_back(canonical, tmp_path))
    root, *children = spans
    assert root["name"] == "invoke_agent labkit-host" and root["parentSpanId"] == ""
    assert _attrs(root)["gen_ai.operation.name"] == "invoke_agent"
    ids = {s["spanId"] for s in spans}
    assert all(s["parentSpanId"] in ids for s in children)
    assert int(root["startTimeUnixNano"]) == min(int(s["startTimeUnixNano"]) for s in spans)
    assert int(root["endTimeUnixNano"]) == max(int(s["endTimeUnixNano"]) for s in spans)


def test_each_request_and_its_reply_are_one_span(canonical, tmp_path):
    spans = _spans(_read_back(canonical, tmp_path))
    mcp = [s for s in spans if "mcp.method.name" in _attrs(s)]
    requests = canonical.of_kind("jsonrpc.request", "jsonrpc.notification")
    assert len(mcp) == len(requests) == len(canonical.of_kind("jsonrpc.response", "jsonrpc.error"))
    for span, request in zip(mcp, requests, strict=True):
        attrs = _attrs(span)
        reply = next(
            e
            for e in canonical
            if e.seq > request.seq
            and e.kind == "jsonrpc.response"
            and e.ref == request.ref
            and e.meta["server"] == request.meta["server"]
        )
        assert attrs["jsonrpc.request.id"] == str(request.ref)
        assert attrs["mcp.method.name"] == request.meta["method"]
        assert attrs["mcp.protocol.version"] == "2026-07-28"
        assert attrs["labkit.server"] == request.meta["server"] and attrs["network.transport"] == "pipe"
        assert int(span["endTimeUnixNano"]) - int(span["startTimeUnixNano"]) == round((reply.t - request.t) * 1e9)
    chats = [s for s in spans if _attrs(s).get("gen_ai.operation.name") == "chat"]
    assert len(chats) == len(canonical.of_kind("model.request")) == 3


def test_tool_calls_carry_the_genai_and_mcp_names(canonical, tmp_path):
    spans = _spans(_read_back(canonical, tmp_path))
    calls = [_attrs(s) | {"name": s["name"]} for s in spans if _attrs(s).get("mcp.method.name") == "tools/call"]
    assert [c["name"] for c in calls] == ["tools/call query_errors", *["tools/call render_error_trend"] * 2]
    assert all(c["gen_ai.operation.name"] == "execute_tool" for c in calls)
    assert [c["gen_ai.tool.name"] for c in calls] == ["query_errors", "render_error_trend", "render_error_trend"]
    assert [c["jsonrpc.request.id"] for c in calls] == ["3", "3", "4"]
    assert [c["labkit.result_type"] for c in calls] == ["complete", "input_required", "complete"]
    model_calls = [e.meta["call_ids"][0] for e in canonical.of_kind("model.response") if e.meta.get("call_ids")]
    assert [c["gen_ai.tool.call.id"] for c in calls] == [model_calls[0], model_calls[1], model_calls[1]]
    query = next(s for s in spans if s["name"] == "tools/call query_errors")
    assert [e["name"] for e in query["events"]] == ["server.query", "system.answer"]


def test_model_calls_carry_the_genai_names(canonical, tmp_path):
    spans = _spans(_read_back(canonical, tmp_path))
    chats = [_attrs(s) | {"name": s["name"]} for s in spans if _attrs(s).get("gen_ai.operation.name") == "chat"]
    for chat, response in zip(chats, canonical.of_kind("model.response"), strict=False):
        assert chat["name"] == f"chat {_model(canonical)}" and chat["gen_ai.request.model"] == _model(canonical)
        assert chat["gen_ai.provider.name"] == chat["gen_ai.system"] == "anthropic"
        assert chat["gen_ai.response.id"] == response.ref and chat["labkit.simulated"] is True
        assert int(chat["gen_ai.usage.input_tokens"]) > 0 and chat["http.response.status_code"] == "200"
    assert [c["gen_ai.response.finish_reasons"]["values"][0]["stringValue"] for c in chats] == [
        "tool_use",
        "tool_use",
        "end_turn",
    ]


def test_ids_are_derived_from_the_trace(canonical, tmp_path):
    first, again = to_otlp(canonical, start_unix_nano=START), _read_back(canonical, tmp_path)
    assert first == again
    salted = _spans(to_otlp(canonical, start_unix_nano=START, salt="run 2"))
    assert {s["traceId"] for s in salted}.isdisjoint({s["traceId"] for s in _spans(first)})


async def test_a_protocol_error_marks_its_span(tmp_path):
    trace = Trace()
    async with Client(stdio_transport("logs", trace)) as logs:
        with pytest.raises(MCPError):
            await logs.call_tool("query_error_logs", {})
    spans = _spans(json.loads(save_otlp(trace, tmp_path / "spans.json", start_unix_nano=START).read_text("utf-8")))
    failed = [s for s in spans if s["status"]]
    assert [s["name"] for s in failed] == ["tools/call query_error_logs"]
    assert failed[0]["status"] == {"code": 2, "message": "Unknown tool: query_error_logs"}
    attrs = _attrs(failed[0])
    assert attrs["error.type"] == attrs["rpc.response.status_code"] == "-32602"


async def test_the_older_era_over_http_nests_the_elicitation(tmp_path):
    run = await run_scenario("canonical", era="2025-11-25", transport="http")
    spans = _spans(_read_back(run.trace, tmp_path))
    by_id = {s["spanId"]: s for s in spans}
    (ask,) = [s for s in spans if s["name"] == "elicitation/create"]
    assert ask["kind"] == 2, "the server asked, the client answered"
    assert by_id[ask["parentSpanId"]]["name"] == "tools/call render_error_trend"
    assert [e["name"] for e in ask["events"]] == ["host.form", "user.answer"]
    mcp = [_attrs(s) for s in spans if "mcp.method.name" in _attrs(s)]
    assert {a["network.transport"] for a in mcp} == {"tcp"} and all(a.get("mcp.session.id") for a in mcp)
    assert {a["mcp.protocol.version"] for a in mcp} == {"2025-11-25"}
    assert "jsonrpc.request.id" not in _attrs(next(s for s in spans if s["name"] == "notifications/initialized"))


def test_the_sdk_exporter_sends_the_same_spans_to_a_collector(canonical):
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from threading import Thread

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    received: list[bytes] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self):  # the standard library names it
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        export_otlp(canonical, f"http://127.0.0.1:{server.server_port}/v1/traces", start_unix_nano=START)
    finally:
        server.shutdown()
    request = ExportTraceServiceRequest.FromString(received[0])
    sent = [s.name for r in request.resource_spans for sc in r.scope_spans for s in sc.spans]
    assert sent == [s["name"] for s in _spans(to_otlp(canonical, start_unix_nano=START))]
