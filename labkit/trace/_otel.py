"""A trace as OpenTelemetry spans, made with the official SDK and named by the MCP and GenAI semantic conventions."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from ._events import Event, Trace
from ._kinds import Kind, Meta
from ._otel_sdk import emit, encode_json, send

__all__ = ["AGENT_NAME", "export_otlp", "save_otlp", "to_otlp"]

AGENT_NAME = "labkit-host"
_INTERNAL, _SERVER, _CLIENT = 1, 2, 3  # OTLP SpanKind
_PROVIDERS = {"/v1/messages": "anthropic", "/v1/chat/completions": "openai", "/v1/responses": "openai"}


def to_otlp(trace: Trace, *, start_unix_nano: int | None = None, salt: str = "") -> dict[str, Any]:
    """The trace as one OTLP/JSON `resourceSpans` document, encoded by the OpenTelemetry SDK (README)."""
    return encode_json(_spans(trace, start_unix_nano, salt), service=AGENT_NAME)


def export_otlp(trace: Trace, endpoint: str, *, headers: dict[str, str] | None = None, **options: Any) -> None:
    """Send the trace's spans to an OTLP/HTTP collector, e.g. `http://127.0.0.1:4318/v1/traces` (README).

    Jaeger, Arize Phoenix and Langfuse accept OTLP/HTTP; the SDK's own exporter sends the protobuf.
    """
    send(
        _spans(trace, options.get("start_unix_nano"), options.get("salt", "")),
        service=AGENT_NAME,
        endpoint=endpoint,
        headers=headers,
    )


def _spans(trace: Trace, start_unix_nano: int | None, salt: str) -> list[Any]:
    """Plan the spans, then make them with the SDK's tracer (`_otel_sdk.emit`).

    A request and its reply become one span: JSON-RPC frames paired by server and id (kind CLIENT,
    or SERVER for a request the server sent), model calls paired in order (`chat {model}`). One
    `invoke_agent` span holds them all; every other event (gate, form, server work, HTTP) is a span
    event on the innermost span around it. Ids are hashes of the events, so the same run always
    exports the same ids (`salt` tells apart runs exported to one backend). Times are the trace's,
    shifted to `start_unix_nano` (default: the run ended just now).
    """
    events = list(trace)
    end = events[-1].t if events else 0.0
    base = time.time_ns() - _ns(end) if start_unix_nano is None else start_unix_nano
    trace_id = _hash(salt, *(_fingerprint(e) for e in events))[:32]
    model = next((_body(e).get("model") for e in events if e.kind == Kind.MODEL_REQUEST), None)
    provider = next((_PROVIDERS.get(e.name or "") for e in events if e.kind == Kind.MODEL_REQUEST), None)
    root = _span(trace_id, "root", f"invoke_agent {AGENT_NAME}", _INTERNAL, events[0] if events else None, None, "")
    root["attributes"] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": AGENT_NAME,
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,  # the older name too
        "gen_ai.request.model": model,
        "labkit.events": len(events),
    }
    transports = {e.meta.get(Meta.SERVER): "tcp" for e in events if e.meta.get(Meta.LAYER) == "http"}
    sessions = {
        e.meta.get(Meta.SERVER): e.payload["headers"]["mcp-session-id"]
        for e in events
        if e.kind == Kind.HTTP_RESPONSE and "mcp-session-id" in ((e.payload or {}).get("headers") or {})
    }
    spans: list[dict[str, Any]] = []
    asked: dict[tuple[Any, str, Any], tuple[Event, Any]] = {}
    chats: list[Event] = []
    call_ids: dict[str, Any] = {}  # the model's call id of each tool, from the host's last gate for it
    loose: list[Event] = []
    for e in events:
        server = e.meta.get(Meta.SERVER)
        if e.kind == Kind.JSONRPC_REQUEST:
            asked[(server, e.src, e.ref)] = (e, call_ids.get(e.name or ""))
        elif e.kind in (Kind.JSONRPC_RESPONSE, Kind.JSONRPC_ERROR) and (server, e.dst, e.ref) in asked:
            spans.append(_mcp_span(trace_id, *asked.pop((server, e.dst, e.ref)), reply=e))
        elif e.kind == Kind.JSONRPC_NOTIFICATION:
            spans.append(_mcp_span(trace_id, e, None))
        elif e.kind == Kind.MODEL_REQUEST:
            chats.append(e)
        elif e.kind == Kind.MODEL_RESPONSE and chats:
            spans.append(_chat_span(trace_id, chats.pop(0), e))
        else:
            if e.kind == Kind.HOST_GATE and e.name:
                call_ids[e.name] = e.ref
            loose.append(e)
    spans += [_mcp_span(trace_id, e, call_id) for e, call_id in asked.values()]
    spans += [_chat_span(trace_id, e, None) for e in chats]
    spans.sort(key=lambda s: s["_first"])
    for span in spans:
        server = span["attributes"].get("labkit.server")
        if server is not None:
            span["attributes"]["network.transport"] = transports.get(server, "pipe")
            span["attributes"]["mcp.session.id"] = sessions.get(server)
        span["parentSpanId"] = _innermost(spans, span["_first"], server, root)["spanId"]
    for e in loose:
        _innermost(spans, e.seq, e.meta.get(Meta.SERVER), root)["events"].append(_span_event(e))
    root["_last"] = events[-1].seq if events else 0
    return emit([_finish(s, base, events) for s in (root, *spans)], service=AGENT_NAME)


def save_otlp(trace: Trace, path: str | Path, **options: Any) -> Path:
    """Write `to_otlp(trace)` to `path` as JSON, ready for any OTLP/JSON reader (notebook 04, README)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(to_otlp(trace, **options), indent=1, ensure_ascii=False), encoding="utf-8")
    return path


def _mcp_span(trace_id: str, request: Event, call_id: Any, reply: Event | None = None) -> dict[str, Any]:
    method = request.meta.get(Meta.METHOD) or (request.payload or {}).get("method") or request.name or "?"
    params = (request.payload or {}).get("params") or {}
    tool = params.get("name") if method == "tools/call" else None
    target = tool or (params.get("name") if method == "prompts/get" else None)
    kind = _CLIENT if request.src == "client" else _SERVER
    span = _span(trace_id, request.seq, f"{method} {target}" if target else method, kind, request, reply, None)
    span["attributes"] = {
        "mcp.method.name": method,
        "jsonrpc.request.id": None if request.kind == Kind.JSONRPC_NOTIFICATION else str(request.ref),
        "mcp.protocol.version": request.meta.get(Meta.ERA),
        "gen_ai.operation.name": "execute_tool" if tool else None,
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.id": call_id if tool else None,
        "gen_ai.tool.call.arguments": json.dumps(params.get("arguments"), ensure_ascii=False) if tool else None,
        "gen_ai.prompt.name": target if method == "prompts/get" else None,
        "mcp.resource.uri": params.get("uri"),
        "labkit.server": request.meta.get(Meta.SERVER),
    }
    answer = (reply.payload or {}) if reply is not None else {}
    error, result = answer.get("error"), answer.get("result") or {}
    if error:
        _fail(span, str(error.get("code")), error.get("message", ""), code=str(error.get("code")))
    elif result.get("isError"):
        _fail(span, "tool_error", "the tool reported an error (isError)")
    elif request.kind == Kind.JSONRPC_REQUEST and reply is None:
        _fail(span, "no_reply", "no reply was recorded")
    span["attributes"]["labkit.result_type"] = result.get("resultType")
    return span


def _chat_span(trace_id: str, request: Event, reply: Event | None) -> dict[str, Any]:
    asked, answer = _body(request), _body(reply)
    span = _span(trace_id, request.seq, f"chat {asked.get('model', '')}".strip(), _CLIENT, request, reply, None)
    provider = _PROVIDERS.get(request.name or "")
    usage = answer.get("usage") or {}
    reasons = (
        [answer["stop_reason"]]
        if answer.get("stop_reason")
        else (
            [c.get("finish_reason") for c in answer.get("choices", [])]
            or ([answer["status"]] if "status" in answer else [])
        )
    )
    status = reply.meta.get(Meta.STATUS) if reply is not None else None
    span["attributes"] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
        "gen_ai.request.model": asked.get("model"),
        "gen_ai.request.max_tokens": asked.get("max_tokens") or asked.get("max_output_tokens"),
        "gen_ai.response.id": answer.get("id"),
        "gen_ai.response.model": answer.get("model"),
        "gen_ai.response.finish_reasons": reasons or None,
        "gen_ai.usage.input_tokens": usage.get("input_tokens", usage.get("prompt_tokens")),
        "gen_ai.usage.output_tokens": usage.get("output_tokens", usage.get("completion_tokens")),
        "server.address": ((request.payload or {}).get("headers") or {}).get("host"),
        "http.response.status_code": status,
        "labkit.simulated": reply.meta.get(Meta.SIMULATED) if reply is not None else None,
        "labkit.tool_call_ids": reply.meta.get(Meta.CALL_IDS) if reply is not None else None,
    }
    if reply is None:
        _fail(span, "no_reply", "no reply was recorded")
    elif isinstance(status, int) and status >= 400:
        _fail(span, str(status), reply.summary)
    return span


def _span(
    trace_id: str, key: Any, name: str, kind: int, first: Event | None, last: Event | None, parent: str | None
) -> dict[str, Any]:
    first_seq = first.seq if first else 0
    return {
        "traceId": trace_id,
        "spanId": _hash(trace_id, str(key))[:16],
        "parentSpanId": parent,
        "name": name,
        "kind": kind,
        "_first": first_seq,
        "_last": last.seq if last else first_seq,
        "attributes": {},
        "events": [],
        "status": None,
    }


def _innermost(spans: list[dict[str, Any]], seq: int, server: Any, root: dict[str, Any]) -> dict[str, Any]:
    """The latest-opened span that is still open at `seq` (same server, if the event has one)."""
    around = [
        s
        for s in spans
        if s["_first"] < seq < s["_last"] and (server is None or s["attributes"].get("labkit.server") == server)
    ]
    return max(around, key=lambda s: s["_first"], default=root)


def _span_event(e: Event) -> dict[str, Any]:
    return {
        "_seq": e.seq,
        "name": e.kind,
        "attributes": {
            "labkit.seq": e.seq,
            "labkit.src": e.src,
            "labkit.dst": e.dst,
            "labkit.summary": e.summary,
            "labkit.server": e.meta.get(Meta.SERVER),
            "gen_ai.tool.name": e.name if e.kind.startswith("host.") else None,
            "http.response.status_code": e.meta.get(Meta.STATUS) if e.kind == Kind.HTTP_RESPONSE else None,
        },
    }


def _finish(span: dict[str, Any], base: int, events: list[Event]) -> dict[str, Any]:
    """Times from sequence numbers; attributes without the unset ones, as the SDK takes them."""
    at = {e.seq: base + _ns(e.t) for e in events}
    first, last = span.pop("_first"), span.pop("_last")
    span["start"] = at.get(first, base)
    span["end"] = at.get(last, at.get(first, base))
    span["attributes"] = _attributes(span["attributes"])
    span["events"] = [
        {"time": at.get(ev.pop("_seq"), base), "name": ev["name"], "attributes": _attributes(ev["attributes"])}
        for ev in span["events"]
    ]
    return span


def _fail(span: dict[str, Any], error_type: str, message: str, *, code: str | None = None) -> None:
    span["attributes"]["error.type"] = error_type
    span["attributes"]["rpc.response.status_code"] = code
    span["status"] = message


def _attributes(values: dict[str, Any]) -> dict[str, Any]:
    return {
        k: v if isinstance(v, (bool, int, float, str, list, tuple)) else json.dumps(v, ensure_ascii=False)
        for k, v in values.items()
        if v is not None
    }


def _body(e: Event | None) -> dict[str, Any]:
    body = (e.payload or {}).get("body") if e is not None and isinstance(e.payload, dict) else None
    return body if isinstance(body, dict) else {}


def _fingerprint(e: Event) -> str:
    return json.dumps([e.seq, e.src, e.dst, e.kind, e.ref, e.name, e.summary], ensure_ascii=False, default=str)


def _hash(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()


def _ns(seconds: float) -> int:
    return round(seconds * 1_000_000_000)
