"""Planned spans made real with the OpenTelemetry SDK, then encoded as OTLP/JSON or sent to a collector."""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["emit", "encode_json", "send"]

_SCOPE = "labkit.otel"
_KINDS = {1: "INTERNAL", 2: "SERVER", 3: "CLIENT"}  # OTLP's numbers; the Python API numbers them from 0
_ID_FIELDS = ("traceId", "spanId", "parentSpanId")


def _planned_ids(trace_id: str, span_ids: Iterator[str]) -> Any:
    """An SDK id generator that hands out the ids planned from the trace, so a run always exports the same ids."""
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    class PlannedIds(IdGenerator):
        def generate_trace_id(self) -> int:
            return int(trace_id, 16)

        def generate_span_id(self) -> int:
            return int(next(span_ids), 16)

        def is_trace_id_random(self) -> bool:
            return False

    return PlannedIds()


def emit(planned: Sequence[dict[str, Any]], *, service: str) -> list[Any]:
    """Make each planned span (parents first) with the SDK's tracer and return the finished spans (notebook 03)."""
    from opentelemetry import trace as api
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if not planned:
        return []
    ids = _planned_ids(planned[0]["traceId"], iter([p["spanId"] for p in planned]))
    provider = TracerProvider(resource=Resource({"service.name": service}), id_generator=ids)
    finished = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(finished))
    tracer = provider.get_tracer(_SCOPE)
    made: dict[str, Any] = {}
    for plan in planned:
        parent = made.get(plan.get("parentSpanId") or "")
        context = api.set_span_in_context(parent) if parent is not None else None
        span = tracer.start_span(
            plan["name"],
            context=context,
            kind=getattr(api.SpanKind, _KINDS[plan["kind"]]),
            attributes=plan["attributes"],
            start_time=plan["start"],
        )
        for event in plan["events"]:
            span.add_event(event["name"], event["attributes"], timestamp=event["time"])
        if plan["status"] is not None:
            span.set_status(api.Status(api.StatusCode.ERROR, plan["status"]))
        made[plan["spanId"]] = span
    for plan in reversed(planned):  # children end before their parents
        made[plan["spanId"]].end(end_time=plan["end"])
    provider.shutdown()
    spans = list(finished.get_finished_spans())
    order = {p["spanId"]: i for i, p in enumerate(planned)}
    return sorted(spans, key=lambda s: order[f"{s.context.span_id:016x}"])


def encode_json(spans: Sequence[Any], *, service: str) -> dict[str, Any]:
    """The spans as one OTLP/JSON document: the SDK's protobuf encoding, with ids in hex as OTLP/JSON wants."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    if not spans:
        return {
            "resourceSpans": [
                {
                    "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": service}}]},
                    "scopeSpans": [{"scope": {"name": _SCOPE}, "spans": []}],
                }
            ]
        }
    document = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in _ID_FIELDS:
                    span[key] = base64.b64decode(span.get(key, "")).hex()
                span.setdefault("events", [])
                span.setdefault("status", {})
    return document


def send(spans: Sequence[Any], *, service: str, endpoint: str, headers: dict[str, str] | None = None) -> None:
    """Export the spans with the SDK's OTLP/HTTP exporter; a collector that refuses them raises (notebook 03)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    exporter = OTLPSpanExporter(endpoint=endpoint, headers=headers, timeout=10)
    try:
        if exporter.export(list(spans)) is not SpanExportResult.SUCCESS:
            raise ConnectionError(f"the collector at {endpoint} did not accept the {len(spans)} spans of {service}")
    finally:
        exporter.shutdown()
