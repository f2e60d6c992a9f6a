"""Views of the security runs: one attack's story through the trace, and the before/after table of many runs."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING

from labkit._i18n import N_, _, listing

from ..security import reveal
from ..trace import Event, Kind, Meta, Outcome, headed
from ._attack_runs import AttackRun
from ._security_lab import canaries_in, local_paths

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["outcomes", "story"]

_KINDS = (
    Kind.HOST_PIN,
    Kind.HOST_SCAN,
    Kind.HOST_HINTS,
    Kind.HOST_GATE,
    Kind.HOST_APPROVAL,
    Kind.HOST_SANITIZE,
    Kind.HOST_TAINT,
    Kind.HOST_NOTE,
    Kind.USER_ANSWER,
    Kind.SERVER_RECEIVED,
)
_LIMIT = 150
_VALUE_LIMIT = 40
# The outcomes table's field names (what code indexes) and their headings in the learner's language.
_OUTCOME_HEADINGS = {
    "attack": N_("attack"),
    "defences": N_("defences"),
    "attack succeeded": N_("attack succeeded"),
    "evidence": N_("evidence"),
    "entered at": N_("entered at"),
    "stopped at": N_("stopped at"),
}
_NOTEWORTHY = frozenset({Outcome.WITHHELD, Outcome.IGNORED, Outcome.REFUSED, Outcome.BLOCKED})


def _said(event: Event) -> str:
    """A model response with the model's reason for its calls, where it gave one (the naive model does)."""
    reason = event.meta.get(Meta.REASON)
    return f"{event.summary} ← {reason}" if reason else event.summary


def _call(event: Event) -> str:
    """A tools/call with each argument cut to a fixed width, and the canaries it carries."""
    params = event.payload.get("params") or {}
    arguments = params.get("arguments") or {}
    shown = []
    for key, value in arguments.items():
        text = local_paths(json.dumps(value, ensure_ascii=False))
        shown.append(f"{key}={text[:_VALUE_LIMIT]}" + ("…" if len(text) > _VALUE_LIMIT else ""))
    leaked = canaries_in(arguments)
    signature = ", ".join(shown)  # a call's arguments are written as code, whatever the learner's language
    return _("tools/call {tool}({shown})").format(tool=params.get("name"), shown=signature) + (
        _(" carrying {leaked}").format(leaked=listing(leaked)) if leaked else ""
    )


def _shown(event: Event) -> bool:
    if event.kind in _KINDS:
        return True
    if event.kind == Kind.MODEL_RESPONSE:
        return bool(event.name)
    return event.kind == Kind.JSONRPC_REQUEST and event.payload.get("method") == "tools/call"


def _routine(event: Event) -> bool:
    """A start-up event that says all is well (tools listed clean, pins unchanged, first-use approvals)."""
    return event.round == 0 and event.meta.get(Meta.OUTCOME) not in _NOTEWORTHY and not event.meta.get(Meta.CHANGED)


def story(run: AttackRun, *, everything: bool = False) -> pd.DataFrame:
    """The events that tell what happened: where the attack entered (◀), the model's calls and why, the host's
    decisions, what servers received, and where the attack was stopped (■) (notebook 07).

    Routine start-up events (clean scans, unchanged pins, first-use approvals) are left out unless `everything`.
    """
    marks = {
        e.seq: _(mark) for e, mark in ((run.entered, N_("◀ entered")), (run.stopped, N_("■ stopped"))) if e is not None
    }
    rows = []
    for event in run.trace:
        if event.seq not in marks and (not _shown(event) or (not everything and _routine(event))):
            continue
        text = (
            _said(event)
            if event.kind == Kind.MODEL_RESPONSE
            else _call(event)
            if event.kind == Kind.JSONRPC_REQUEST
            else event.summary
        )
        text = local_paths(reveal(" ".join(text.split())))
        rows.append(
            {
                "seq": event.seq,
                "round": event.round,
                "from": event.src,
                "to": event.dst,
                "kind": event.kind,
                "summary": text if len(text) <= _LIMIT else text[: _LIMIT - 1] + "…",
                "": marks.get(event.seq, ""),
            }
        )
    return headed(rows, columns=["seq", "round", "from", "to", "kind", "summary", ""], index="seq")


def outcomes(runs: Iterable[AttackRun]) -> pd.DataFrame:
    """One row per run: attack, defences, success, evidence, where it entered and was stopped (notebook 07)."""
    return headed((run.outcome() for run in runs), _OUTCOME_HEADINGS)
