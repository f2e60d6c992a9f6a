"""When each tools/call was on the wire, read from the recorded frames: did a turn's calls overlap?"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ._events import Event, Trace

__all__ = ["CallSpan", "call_spans", "overlap_saving"]


@dataclass(frozen=True)
class CallSpan:
    """One tools/call: its round, server, tool, and when its request and response crossed the wire (notebook 08)."""

    round: int
    server: str
    tool: str
    sent: float
    answered: float

    @property
    def seconds(self) -> float:
        return self.answered - self.sent


def call_spans(trace: Trace | Iterable[Event]) -> list[CallSpan]:
    """Every tools/call whose response was recorded, paired by server and JSON-RPC id, in sending order (notebook 08)."""
    events = list(trace)
    sent = {
        (e.meta.get("server"), e.ref): e for e in events
        if e.kind == "jsonrpc.request" and (e.payload or {}).get("method") == "tools/call"
    }
    spans = []
    for reply in events:
        request = sent.get((reply.meta.get("server"), reply.ref)) if reply.kind == "jsonrpc.response" else None
        if request is not None:
            spans.append(CallSpan(request.round, str(request.meta.get("server")), str(request.name), request.t, reply.t))
    return sorted(spans, key=lambda span: span.sent)


def overlap_saving(spans: Iterable[CallSpan]) -> dict[int, float]:
    """Per round: the calls' summed durations minus the time from the first request to the last response.

    Calls run one after another save nothing (0, or less: the gaps between them); calls that ran at
    the same time save the part of their durations that overlapped (notebook 08).
    """
    by_round: dict[int, list[CallSpan]] = {}
    for span in spans:
        by_round.setdefault(span.round, []).append(span)
    return {
        round_no: sum(s.seconds for s in group) - (max(s.answered for s in group) - min(s.sent for s in group))
        for round_no, group in by_round.items()
    }
