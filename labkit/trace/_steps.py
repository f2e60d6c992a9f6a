"""Steps: a trace's events grouped into numbered steps, each done by one actor, by rules over the events."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from labkit._i18n import _, clauses

from ._events import Event, Trace
from ._kinds import Kind, Meta
from ._select import select

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["STEP_ACTORS", "Step", "count_steps", "group_steps", "steps_table"]

STEP_ACTORS = ("host", "server", "model", "user", "system")
"""The MCP client lives inside the host, so what the client sends counts as the host's step."""


@dataclass(frozen=True)
class Step:
    """One numbered step: who acted, what they did, and the events it was made of (notebook 03)."""

    n: int
    actor: str
    summary: str
    seqs: tuple[int, ...]


def group_steps(trace: Trace | Iterable[Event], *, final_handoff: str = "model") -> list[Step]:
    """Group the task's events (round 1 on; setup is round 0) into steps (notebook 03).

    The rules, in order:
    1. An event belongs to the actor that sent it; the MCP client's frames belong to the host.
    2. Consecutive events of one actor form one step, except that a gate decision and every
       JSON-RPC frame the client sends (a request, or its answer to the server's request) each
       open a step of their own.
    3. Writing tool results back and asking the model again is one host step — unless the model
       then answers without calling a tool: that last hand-off is part of the model's final answer.
       This rule is a choice (the article's): `final_handoff="host"` counts that hand-off for the host.
    """
    if final_handoff not in ("model", "host"):
        raise ValueError(f"final_handoff={final_handoff!r}: use 'model' (the article's count) or 'host'")
    events = [e for e in select(trace) if e.round >= 1]
    owners = _owners(events, final_handoff)
    groups: list[tuple[str, list[Event]]] = []
    for event, owner in zip(events, owners, strict=True):
        if groups and groups[-1][0] == owner and not _opens_step(event):
            groups[-1][1].append(event)
        else:
            groups.append((owner, [event]))
    return [
        Step(n, actor, _describe(actor, members), tuple(e.seq for e in members))
        for n, (actor, members) in enumerate(groups, start=1)
    ]


def count_steps(steps: Iterable[Step]) -> dict[str, int]:
    """Steps per actor, every actor listed (notebook 03)."""
    counts = Counter(step.actor for step in steps)
    return {actor: counts.get(actor, 0) for actor in STEP_ACTORS}


def steps_table(steps: Iterable[Step]) -> pd.DataFrame:
    """The steps as a table: number, actor, summary, and the event numbers behind each (notebook 03)."""
    import pandas as pd

    from ._event_table import StepTable

    rows = [{"step": s.n, "actor": s.actor, "summary": s.summary, "events": _span(s.seqs)} for s in steps]
    return StepTable(pd.DataFrame(rows, columns=["step", "actor", "summary", "events"]).set_index("step"))


def _owners(events: list[Event], final_handoff: str) -> list[str]:
    owners: list[str] = ["host" if e.src == "client" else e.src for e in events]
    for i, event in enumerate(events):
        if final_handoff == "model" and event.kind == Kind.HOST_WRITEBACK and _final_answer_follows(events, i):
            for j in range(i, _next_model_response(events, i)):
                owners[j] = "model"
    return owners


def _next_model_response(events: list[Event], start: int) -> int:
    return next((j for j in range(start, len(events)) if events[j].kind == Kind.MODEL_RESPONSE), len(events))


def _final_answer_follows(events: list[Event], start: int) -> bool:
    j = _next_model_response(events, start)
    return j < len(events) and not events[j].meta.get(Meta.CALL_IDS) and events[j].meta.get(Meta.STATUS, 200) < 400


def _opens_step(event: Event) -> bool:
    return event.kind == Kind.HOST_GATE or (event.src == "client" and event.kind.startswith("jsonrpc."))


def _describe(actor: str, members: list[Event]) -> str:
    first = members[0]
    if actor == "model":
        answer = next(e for e in reversed(members) if e.kind == Kind.MODEL_RESPONSE)
        reads = _("reads the results and answers: ") if first.kind == Kind.HOST_WRITEBACK else ""
        return _shorten(f"model {reads}{answer.summary}")
    if first.kind == Kind.HOST_WRITEBACK:
        return _("host writes the result back as data and asks the model again ({n_members} events)").format(
            n_members=len(members)
        )
    if first.kind == Kind.MODEL_REQUEST and first.src == "host":
        return _("host sends the conversation and the tools to the model")
    text = clauses(dict.fromkeys(e.summary for e in members if e.kind != Kind.MODEL_REQUEST))
    return _shorten(text)


def _shorten(text: str, limit: int = 110) -> str:
    # Event summaries are folded already; cutting the end keeps their markers readable.
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _span(seqs: tuple[int, ...]) -> str:
    return str(seqs[0]) if len(seqs) == 1 else f"{seqs[0]}–{seqs[-1]}"
