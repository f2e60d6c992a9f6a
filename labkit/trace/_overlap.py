"""When each tools/call was on the wire, read from the recorded frames: did a turn's calls overlap?"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ._events import Event, Trace
from ._kinds import Kind, Meta

__all__ = ["CallSpan", "call_spans", "covered", "overlap_saving"]


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
    """Every tools/call whose response was recorded, paired by server and JSON-RPC id, as sent (notebook 08)."""
    events = list(trace)
    sent = {
        (e.meta.get(Meta.SERVER), e.ref): e
        for e in events
        if e.kind == Kind.JSONRPC_REQUEST and (e.payload or {}).get("method") == "tools/call"
    }
    spans = []
    for reply in events:
        request = sent.get((reply.meta.get(Meta.SERVER), reply.ref)) if reply.kind == Kind.JSONRPC_RESPONSE else None
        if request is not None:
            spans.append(
                CallSpan(request.round, str(request.meta.get(Meta.SERVER)), str(request.name), request.t, reply.t)
            )
    return sorted(spans, key=lambda span: span.sent)


def overlap_saving(spans: Iterable[CallSpan]) -> dict[int, float]:
    """Per round: the calls' summed durations minus the time at least one of them was on the wire.

    Calls run one after another save nothing (0, whatever the gaps between them: a gap is the host's
    own work, such as answering a form); calls that ran at the same time save the part of their
    durations that overlapped (notebook 08).
    """
    by_round: dict[int, list[CallSpan]] = {}
    for span in spans:
        by_round.setdefault(span.round, []).append(span)
    return {
        round_no: sum(s.seconds for s in group) - covered((s.sent, s.answered) for s in group)
        for round_no, group in by_round.items()
    }


def covered(intervals: Iterable[tuple[float, float]]) -> float:
    """The length of the union of `(start, end)` intervals: the time at least one was open (notebook 08)."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total
