"""What skills put into the model's context, turn by turn, measured in the recorded requests."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .._i18n import N_, _, listing
from ..skills import SkillLibrary
from ..trace import ESTIMATOR, Event, Kind, Trace, estimate_tokens, headed

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ESTIMATOR", "context_ledger", "context_table", "estimate_tokens", "upfront_table"]

_TIER_KINDS = (Kind.SKILL_CATALOG, Kind.SKILL_LOAD, Kind.SKILL_RESOURCE, Kind.SKILL_PROMPT)
_TIER_LABELS = {1: "tier 1 catalog", 2: "tier 2 bodies", 3: "tier 3 resources"}
_HEADINGS = {
    "turn": N_("turn"),
    "round": N_("round"),
    "tier": N_("tier"),
    "kind": N_("kind"),
    "item": N_("item"),
    "new": N_("new"),
    "bytes": N_("bytes"),
    "tokens": N_("tokens"),
    "tier 1 catalog": N_("tier 1 catalog"),
    "tier 2 bodies": N_("tier 2 bodies"),
    "tier 3 resources": N_("tier 3 resources"),
    "skill tokens": N_("skill tokens"),
    "skill bytes": N_("skill bytes"),
    "entered this turn": N_("entered this turn"),
    "progressive (tokens)": N_("progressive (tokens)"),
    "every SKILL.md up front (tokens)": N_("every SKILL.md up front (tokens)"),
    "all turns": N_("all turns"),
}


def _loads(trace: Trace | Iterable[Event]) -> list[Event]:
    return [e for e in trace if e.kind in _TIER_KINDS]


def _requests(trace: Trace | Iterable[Event]) -> list[Event]:
    return [e for e in trace if e.kind == Kind.MODEL_REQUEST]


def _sent(text: str, request: Event) -> bool:
    """True when `text` is inside the request body the SDK sent (compared as JSON-escaped strings)."""
    body = json.dumps(request.payload.get("body"), ensure_ascii=False)
    return json.dumps(text, ensure_ascii=False)[1:-1] in body


def context_ledger(trace: Trace | Iterable[Event]) -> pd.DataFrame:
    """One row per (model turn, skill text) in that turn's request: tier, item, new or carried, size (notebook 06).

    A text counts for a turn only if it really is in the request body the SDK sent; "new" means it
    was loaded since the previous request.
    """
    import pandas as pd

    loads, rows, previous = _loads(trace), [], 0
    for turn, request in enumerate(_requests(trace), start=1):
        for load in loads:
            if load.seq < request.seq and _sent(load.payload["text"], request):
                rows.append(
                    {
                        "turn": turn,
                        "round": request.round,
                        "tier": load.meta["tier"],
                        "kind": load.kind,
                        "item": load.name,
                        "new": load.seq > previous,
                        "bytes": load.meta["bytes"],
                        "tokens": load.meta["tokens"],
                    }
                )
        previous = request.seq
    return headed(
        pd.DataFrame(rows, columns=["turn", "round", "tier", "kind", "item", "new", "bytes", "tokens"]), _HEADINGS
    )


def context_table(trace: Trace | Iterable[Event]) -> pd.DataFrame:
    """Per model turn: estimated tokens at each tier, their total, and what entered the context (notebook 06)."""
    import pandas as pd

    ledger = context_ledger(trace)
    turns = range(1, len(_requests(trace)) + 1)
    rows = []
    for turn in turns:
        mine = ledger[ledger["turn"] == turn]
        row: dict[str, Any] = {"turn": turn}
        for tier, label in _TIER_LABELS.items():
            row[label] = int(mine[mine["tier"] == tier]["tokens"].sum())
        row["skill tokens"] = int(mine["tokens"].sum())
        row["skill bytes"] = int(mine["bytes"].sum())
        entered = zip(mine[mine["new"]]["item"], mine[mine["new"]]["tier"], strict=True)
        row["entered this turn"] = listing(_("{item} (tier {tier})").format(item=i, tier=t) for i, t in entered) or "—"
        rows.append(row)
    return headed(pd.DataFrame(rows).set_index("turn"), _HEADINGS)


def upfront_table(trace: Trace | Iterable[Event], library: SkillLibrary) -> pd.DataFrame:
    """Progressive loading against every SKILL.md in the prompt up front, per turn of the same run (notebook 06)."""
    import pandas as pd

    progressive = context_table(trace)
    everything = estimate_tokens(library.everything())
    table = pd.DataFrame(
        {
            "progressive (tokens)": progressive["skill tokens"],
            "every SKILL.md up front (tokens)": everything,
        }
    )
    table.loc["all turns"] = table.sum()
    return headed(table, _HEADINGS)
