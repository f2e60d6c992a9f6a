"""A recording httpx2 transport: every model API request and response, as the real SDK sent and got it."""

from __future__ import annotations

import json
from typing import Any

import httpx2

from labkit._i18n import _

from ._events import Trace
from ._kinds import Kind

__all__ = ["OFFLINE_KEY", "REASON_HEADER", "SIMULATED_MODEL", "ModelTap", "redact"]

OFFLINE_KEY = "offline"
SIMULATED_MODEL = "teaching-model-SIMULATED"
"""The name the offline teaching model answers to; it says SIMULATED wherever a model name is shown."""
REASON_HEADER = "x-teaching-model-reason"
"""The simulated model's reason for a turn's calls (JSON text), recorded as `meta["reason"]`."""
_SECRET_HEADERS = {"authorization", "x-api-key", "api-key"}
_SUMMARY_LIMIT = 80
_RETRY_HEADER = "x-stainless-retry-count"  # both SDKs number every attempt of one call: 0 first, then 1, 2…


class ModelTap(httpx2.BaseTransport, httpx2.AsyncBaseTransport):
    """Wraps the transport an SDK client uses and records into a `Trace`; it never alters the traffic (notebook 01).

    `inner` is the simulator's transport offline, or `httpx2.HTTPTransport()` /
    `httpx2.AsyncHTTPTransport()` for a real provider. Event streams are passed through unread.
    """

    def __init__(self, inner: httpx2.BaseTransport | httpx2.AsyncBaseTransport, trace: Trace) -> None:
        self.inner = inner
        self.trace = trace

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(self.inner, httpx2.BaseTransport), "a sync client needs a sync inner transport"
        request.read()
        self._record_request(request)
        response = self.inner.handle_request(request)
        if not _is_event_stream(response):
            response.read()
        self._record_response(response)
        return response

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(self.inner, httpx2.AsyncBaseTransport), "an async client needs an async inner transport"
        await request.aread()
        self._record_request(request)
        response = await self.inner.handle_async_request(request)
        if not _is_event_stream(response):
            await response.aread()
        self._record_response(response)
        return response

    def close(self) -> None:
        if isinstance(self.inner, httpx2.BaseTransport):
            self.inner.close()

    async def aclose(self) -> None:
        if isinstance(self.inner, httpx2.AsyncBaseTransport):
            await self.inner.aclose()

    def _record_request(self, request: httpx2.Request) -> None:
        body = _json_or_text(request.content)
        answered = _answered_calls(body)
        self.trace.record(
            "host",
            "model",
            Kind.MODEL_REQUEST,
            _request_summary(request.url.path, body),
            ref=answered[0] if answered else None,
            name=request.url.path,
            payload={
                "method": request.method,
                "path": request.url.path,
                "headers": redact(request.headers),
                "body": body,
            },
            answers=answered or None,
            retry=int(request.headers.get(_RETRY_HEADER, 0)) or None,
        )

    def _record_response(self, response: httpx2.Response) -> None:
        # What the model wrote is recorded as the trace may keep it: a secret a defence withholds never lands here.
        body = None if _is_event_stream(response) else self.trace.redacted(_json_or_text(response.content))
        calls = _tool_calls(body) if response.status_code < 400 else []
        notes = response.headers.get("x-teaching-model-trace")
        reason = response.headers.get(REASON_HEADER)
        self.trace.record(
            "model",
            "host",
            Kind.MODEL_RESPONSE,
            _response_summary(response.status_code, body, calls),
            ref=body.get("id") if isinstance(body, dict) else None,
            name=", ".join(name for _, name in calls) or None,
            payload={"status": response.status_code, "body": body},
            status=response.status_code,
            call_ids=[call_id for call_id, _ in calls] or None,
            simulated=response.headers.get("x-teaching-model") == "simulated" or None,
            decision=self.trace.redacted(json.loads(notes)) if notes else None,
            reason=self.trace.redacted(json.loads(reason)) if reason else None,
        )


def redact(headers: httpx2.Headers) -> dict[str, str]:
    """Headers with every key hidden except the offline placeholder (notebook 01)."""
    shown = {}
    for name, value in headers.items():
        scheme, _, secret = value.rpartition(" ")
        if name.lower() in _SECRET_HEADERS and secret != OFFLINE_KEY:
            value = f"{scheme} [redacted]".strip()
        shown[name] = value
    return shown


def _is_event_stream(response: httpx2.Response) -> bool:
    return response.headers.get("content-type", "").startswith("text/event-stream")


def _json_or_text(content: bytes) -> Any:
    try:
        return json.loads(content) if content else None
    except ValueError:
        return content.decode(errors="replace")


def _answered_calls(body: Any) -> list[str]:
    """The call ids whose results this request carries (only the newest turn)."""
    if not isinstance(body, dict):
        return []
    if isinstance(body.get("input"), list):
        return [i["call_id"] for i in body["input"] if isinstance(i, dict) and i.get("type") == "function_call_output"]
    messages = body.get("messages") or []
    trailing_tools: list[str] = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        trailing_tools.insert(0, message.get("tool_call_id"))
    if trailing_tools:
        return trailing_tools
    last = messages[-1].get("content") if messages else None
    return (
        [b["tool_use_id"] for b in last or [] if isinstance(b, dict) and b.get("type") == "tool_result"]
        if isinstance(last, list)
        else []
    )


def _tool_calls(body: Any) -> list[tuple[str, str]]:
    """(call id, tool name) pairs in a response of any of the three APIs."""
    if not isinstance(body, dict):
        return []
    if body.get("type") == "message":
        return [(b["id"], b["name"]) for b in body.get("content", []) if b.get("type") == "tool_use"]
    if body.get("object") == "response":
        return [(i["call_id"], i["name"]) for i in body.get("output", []) if i.get("type") == "function_call"]
    message = (body.get("choices") or [{}])[0].get("message") or {}
    return [(c["id"], c["function"]["name"]) for c in message.get("tool_calls") or []]


def _text(body: dict[str, Any]) -> str:
    if body.get("type") == "message":
        return " ".join(b.get("text", "") for b in body.get("content", []) if b.get("type") == "text")
    if body.get("object") == "response":
        parts = [c for i in body.get("output", []) if i.get("type") == "message" for c in i.get("content", [])]
        return " ".join(p.get("text", "") for p in parts)
    return ((body.get("choices") or [{}])[0].get("message") or {}).get("content") or ""


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _SUMMARY_LIMIT else text[: _SUMMARY_LIMIT - 1] + "…"


def _request_summary(path: str, body: Any) -> str:
    if not isinstance(body, dict):
        return f"POST {path}"
    history = body.get("messages") if "messages" in body else body.get("input")
    turns = len(history) if isinstance(history, list) else 1
    said = (
        _("POST {path}: {turns} message(s), {tools} tool(s)")
        if "messages" in body
        else _("POST {path}: {turns} input item(s), {tools} tool(s)")
    )
    return said.format(path=path, turns=turns, tools=len(body.get("tools") or []))


def _response_summary(status: int, body: Any, calls: list[tuple[str, str]]) -> str:
    if status >= 400:
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message", "") if isinstance(error, dict) else str(body)
        return _short(f"{status} {message}")
    if body is None:
        return f"{status} event stream"
    if calls:
        kind = {"message": "tool_use", "response": "function_call"}.get(
            body.get("type") or body.get("object"), "tool_calls"
        )
        return f"{kind} " + ", ".join(name for _, name in calls)
    return _short("text: " + _text(body))
