"""Checks for notebook 03 (the 19 steps): each runs the scenario itself and counts its steps from the new trace."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from labkit._i18n import N_, _, listing

from ...trace import STEP_ACTORS, Kind
from .._exercises import register, run_sync

__all__ = ["check_ask_back_old_wire", "check_bad_since_counts", "check_retry_seq"]


@lru_cache(maxsize=4)
def _fresh(scenario: str, era: str) -> Any:
    """A new run of `scenario` on `era`, made by the checker (scripted user, the same real servers)."""
    from .._runs import (
        run_scenario,  # imported late: the scenarios pull in the MCP client SDK
    )

    return run_sync(lambda: run_scenario(scenario, era=era))


def _counts_problem(answer: Any, scenario: str, era: str, name: str) -> str | None:
    if not isinstance(answer, dict) or set(answer) != set(STEP_ACTORS):
        return _("{name} should be a dict with exactly the keys {STEP_ACTORS}, each a number of steps.").format(
            name=name, STEP_ACTORS=list(STEP_ACTORS)
        )
    counts = _fresh(scenario, era).counts
    wrong = [actor for actor in STEP_ACTORS if answer[actor] != counts[actor]]
    if not wrong:
        return None
    total = sum(counts.values())
    return _(
        "a run of {scenario!r} on {era} has {total} steps, and your count for {wrong} is off (you "
        "predicted {predicted})."
    ).format(
        scenario=scenario,
        era=era,
        total=total,
        wrong=listing(wrong),
        predicted=sum(v for v in answer.values() if isinstance(v, int)),
    )


@register(
    "03.1",
    N_(
        "On the 2026-07-28 wire the user's answer travels in a new tools/call: a new id, the answers, "
        "and the requestState handed back unchanged."
    ),
    N_("§7 The same task on the 2025-11-25 wire"),
)
def check_retry_seq(answer: Any) -> str | None:
    if isinstance(answer, bool) or not isinstance(answer, int):
        return _("answer_1 should be one event number (an int from the `seq` column).")
    trace = _fresh("ask-back", "2026-07-28").trace
    by_seq = {e.seq: e for e in trace}
    retry = next(
        e
        for e in trace
        if e.src == "client" and e.kind == Kind.JSONRPC_REQUEST and "requestState" in (e.payload.get("params") or {})
    )
    if answer == retry.seq:
        return None
    event = by_seq.get(answer)
    if event is None:
        return _("the ask-back run has events 1 to {n_trace}; there is no event {answer}.").format(
            n_trace=len(trace), answer=answer
        )
    result = event.payload.get("result") if isinstance(event.payload, dict) else None
    if isinstance(result, dict) and "requestState" in result:
        return _(
            "event {answer} is the server's input_required reply, which hands the requestState out; "
            "the retry is the client's request that brings it back."
        ).format(answer=answer)
    if event.kind == Kind.JSONRPC_REQUEST and event.name == retry.name:
        return _(
            "event {answer} of ask.trace is the first tools/call for the chart (id {ref}): it carries no answers yet."
        ).format(answer=answer, ref=event.ref)
    return _(
        "event {answer} is {src} → {dst} {kind}, not a client request carrying requestState (look "
        "in ask.trace, not run.trace)."
    ).format(answer=answer, src=event.src, dst=event.dst, kind=event.kind)


@register(
    "03.2",
    N_(
        "An execution error (isError) goes back to the model, which fixes its arguments: the loop takes "
        "one more round, and the count shows who did the extra work."
    ),
    N_("§6 How events become steps and §8 The ask-back variant"),
)
def check_bad_since_counts(answer: Any) -> str | None:
    return _counts_problem(answer, "bad-since", "2026-07-28", "answer_2")


@register(
    "03.3",
    N_("The protocol era changes which messages carry the form, not who does each step."),
    N_("§7 The same task on the 2025-11-25 wire and §8 The ask-back variant"),
)
def check_ask_back_old_wire(answer: Any) -> str | None:
    return _counts_problem(answer, "ask-back", "2025-11-25", "answer_3")
