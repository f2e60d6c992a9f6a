"""Figure 3: the canonical run end to end, and where its wall time goes, read from the trace's event times."""

from __future__ import annotations

import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

from labkit.lessons import run_scenario
from labkit.trace import Event, Kind, Meta, Trace, covered

from .memory import PeakRSS

__all__ = ["TARGET_S", "Split", "measure_canonical", "split_trace"]

TARGET_S = 1.0
_PARTS = ("wall", "startup", "protocol", "model", "host", "shutdown")


@dataclass(frozen=True)
class Split:
    """One run's wall time in five parts that add up to it (seconds); see the README for the definitions."""

    wall: float
    startup: float
    protocol: float
    model: float
    host: float
    shutdown: float


async def measure_canonical(runs: int, transport: str = "stdio") -> dict[str, Any]:
    """`run_scenario("canonical")` `runs` times after one warm-up run; medians of each part, peak memory."""
    splits: list[Split] = []
    calls: list[list[dict[str, Any]]] = []
    with PeakRSS() as memory:
        first, _ = await _one_run(transport)
        for _ in range(runs):
            split, run_calls = await _one_run(transport)
            splits.append(split)
            calls.append(run_calls)
    median = {name: round(statistics.median(getattr(s, name) for s in splits), 3) for name in _PARTS}
    return {
        "transport": transport,
        "runs": runs,
        "median_s": median,
        "first_run_s": asdict(first),
        "all_runs_s": [round(s.wall, 3) for s in splits],
        "calls_last_run": calls[-1],
        "target_s": TARGET_S,
        "meets_target": median["wall"] <= TARGET_S,
        "memory": memory.as_dict(),
    }


async def _one_run(transport: str) -> tuple[Split, list[dict[str, Any]]]:
    trace = Trace()
    started = time.monotonic()  # the trace's clock starts at Trace(), a few microseconds earlier
    run = await run_scenario("canonical", transport=transport, trace=trace)
    wall = time.monotonic() - started
    if not run.result.delivered:
        raise RuntimeError(f"the canonical run was not delivered: {run.result.reason}")
    return split_trace(trace, wall), mcp_calls(trace)


def split_trace(trace: Trace, wall: float) -> Split:
    """Start-up until the user's question; model and MCP protocol as the union of their request→reply
    intervals; host is the rest until the last event; shutdown is what follows the last event."""
    events = list(trace)
    asked = next(e.t for e in events if e.kind == Kind.USER_ASK)
    last = events[-1].t
    model = _intervals(events, Kind.MODEL_REQUEST, (Kind.MODEL_RESPONSE,), after=asked)
    protocol = [span for span in _mcp_intervals(events) if span[0] >= asked]
    model_s = covered(model)
    both_s = covered(model + protocol)
    return Split(
        wall=wall,
        startup=asked,
        protocol=both_s - model_s,
        model=model_s,
        host=(last - asked) - both_s,
        shutdown=wall - last,
    )


def mcp_calls(trace: Trace) -> list[dict[str, Any]]:
    """Every MCP request of a run with its server and how long its reply took (ms)."""
    rows = []
    events = list(trace)
    for (start, end), request in zip(_mcp_intervals(events), _mcp_requests(events), strict=True):
        rows.append(
            {
                "server": request.meta.get(Meta.SERVER),
                "name": request.name,
                "t": round(start, 3),
                "ms": round((end - start) * 1000, 1),
            }
        )
    return rows


def _mcp_requests(events: list[Event]) -> list[Event]:
    return [e for e in events if e.kind == Kind.JSONRPC_REQUEST and e.src == "client" and _answered(events, e)]


def _answered(events: list[Event], request: Event) -> bool:
    return _reply(events, request) is not None


def _reply(events: list[Event], request: Event) -> Event | None:
    return next(
        (
            e
            for e in events
            if e.seq > request.seq
            and e.src == "server"
            and e.ref == request.ref
            and e.kind in (Kind.JSONRPC_RESPONSE, Kind.JSONRPC_ERROR)
            and e.meta.get(Meta.SERVER) == request.meta.get(Meta.SERVER)
        ),
        None,
    )


def _mcp_intervals(events: list[Event]) -> list[tuple[float, float]]:
    spans = []
    for request in _mcp_requests(events):
        reply = _reply(events, request)
        assert reply is not None
        spans.append((request.t, reply.t))
    return spans


def _intervals(
    events: list[Event], start_kind: str, end_kinds: tuple[str, ...], after: float
) -> list[tuple[float, float]]:
    spans, opened = [], None
    for event in events:
        if event.t < after:
            continue
        if event.kind == start_kind:
            opened = event.t
        elif event.kind in end_kinds and opened is not None:
            spans.append((opened, event.t))
            opened = None
    return spans
