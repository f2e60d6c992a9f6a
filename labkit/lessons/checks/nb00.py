"""Checks for notebook 00 (start here): each reruns the canonical task or asks the log store itself."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from labkit._i18n import N_, _

from ...trace import Trace, select
from .._exercises import register, run_sync

__all__ = ["check_peak", "check_round_two_frames", "check_system_events"]


@lru_cache(maxsize=1)
def _canonical() -> Trace:
    """A fresh run of the canonical task, made by the checker itself (scripted user, same servers)."""
    from .._runs import (
        run_scenario,  # imported late: the scenarios pull in the MCP client SDK
    )

    return run_sync(lambda: run_scenario("canonical")).trace


def _seqs(answer: Any, name: str) -> list[int] | str:
    if not isinstance(answer, (list, tuple)) or not all(isinstance(n, int) and not isinstance(n, bool) for n in answer):
        return _("{name} should be a list of event numbers (ints from the `seq` column), e.g. [1, 2].").format(
            name=name
        )
    return sorted(answer)


@register(
    "00.1",
    N_("Only the MCP server talks to the business system; filter a trace by actor to see it."),
    N_("§3 How to read a trace (filters)"),
)
def check_system_events(answer: Any) -> str | None:
    seqs = _seqs(answer, "answer_1")
    if isinstance(seqs, str):
        return seqs
    trace = _canonical()
    expected = [e.seq for e in select(trace, actors=["system"])]
    by_seq = {e.seq: e for e in trace}
    for seq in seqs:
        event = by_seq.get(seq)
        if event is None:
            return _("there is no event {seq}: the run has events 1 to {n_trace}.").format(seq=seq, n_trace=len(trace))
        if seq not in expected:
            return _("event {seq} ({src} → {dst}, {kind}) does not involve the business system.").format(
                seq=seq, src=event.src, dst=event.dst, kind=event.kind
            )
    missing = [seq for seq in expected if seq not in seqs]
    if missing:
        return _("{n_missing} event(s) with the business system at one end are missing from your list.").format(
            n_missing=len(missing)
        )
    others = {e.src for e in select(trace, actors=["system"])} | {e.dst for e in select(trace, actors=["system"])}
    if others != {"server", "system"}:  # the lesson's claim, checked on the fresh run
        return _("in a fresh run the business system also talked to {actors}.").format(
            actors=sorted(others - {"server", "system"})
        )
    return None


@register(
    "00.2",
    N_(
        "A tools/call result carries data twice: `content` for reading and `structuredContent` for code; "
        "read it from the frame."
    ),
    N_("§3 How to read a trace (one frame in full)"),
)
def check_peak(answer: Any) -> str | None:
    from servers._wiring import (
        data_dir,  # imported late: the servers are needed only for this check
    )
    from servers.logs import build_report
    from servers.systems.log_store import LogStore, parse_window

    if not isinstance(answer, dict) or set(answer) != {"peak_hour", "peak_errors"}:
        return _("answer_2 should be a dict with the keys 'peak_hour' and 'peak_errors'.")
    report = build_report(LogStore(data_dir()), "order-service", *parse_window("2026-10-29T20:00", None))
    if answer["peak_hour"] != report.peak_hour:
        return _("the log store's peak hour is not {peak_hour!r}: copy `peak_hour` from structuredContent.").format(
            peak_hour=answer["peak_hour"]
        )
    if answer["peak_errors"] != report.peak_errors:
        return _("{peak_errors!r} is not the number of errors in the peak hour: read `peak_errors`.").format(
            peak_errors=answer["peak_errors"]
        )
    return None


@register(
    "00.3",
    N_(
        "A round is one model request and all the host does with its answer; the chart call in round 2 "
        "needs two JSON-RPC request/response pairs."
    ),
    N_("§3 How to read a trace (filters)"),
)
def check_round_two_frames(answer: Any) -> str | None:
    seqs = _seqs(answer, "answer_3")
    if isinstance(seqs, str):
        return seqs
    trace = _canonical()
    expected = [e.seq for e in select(trace, rounds=[2], kinds=["jsonrpc."])]
    by_seq = {e.seq: e for e in trace}
    for seq in seqs:
        event = by_seq.get(seq)
        if event is None:
            return _("there is no event {seq}: the run has events 1 to {n_trace}.").format(seq=seq, n_trace=len(trace))
        if event.round != 2:
            return _("event {seq} belongs to round {round}, not round 2.").format(seq=seq, round=event.round)
        if not event.kind.startswith("jsonrpc."):
            return _("event {seq} is a {kind} event, not a JSON-RPC frame (filter with kinds=['jsonrpc.']).").format(
                seq=seq, kind=event.kind
            )
    if seqs != expected:
        return _("round 2 has {n_expected} JSON-RPC frames; your list has {n_seqs}.").format(
            n_expected=len(expected), n_seqs=len(seqs)
        )
    return None
