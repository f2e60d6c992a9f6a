"""Views of a trace: a pandas table, a Mermaid sequence diagram, and one message pretty-printed."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Set
from typing import TYPE_CHECKING, Any

from .._i18n import _
from ._events import ACTORS, Event, Trace
from ._kinds import Meta
from ._labels import ACTOR_LABELS, EVENT_HEADINGS, diagram_label
from ._png import display_png
from ._select import select
from ._summaries import fold

if TYPE_CHECKING:
    import pandas as pd

    from ._event_table import EventTable

__all__ = ["Diagram", "headed", "pretty", "sequence_diagram", "table"]

# Mermaid reads ';' as a statement end and '#' as the start of an entity code.
_MERMAID_ESCAPES = str.maketrans({"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;", "\n": " "})
_TABLE_COLUMNS = ["seq", "round", "from", "to", "kind", "summary", "name", "server", "id"]


def headed(
    rows: Iterable[Mapping[str, Any]] | pd.DataFrame,
    headings: Mapping[str, str] | None = None,
    *,
    columns: list[str] | None = None,
    index: str | None = None,
) -> pd.DataFrame:
    """`rows` (or a table) as a table whose headings are shown in the learner's language: `headings` maps a field
    name or a row label to its heading, marked with `N_` (by default the event table's: round, from, to, kind,
    summary…); the data keeps the field names, `columns` in that order, `index` as the index (notebook 07)."""
    import pandas as pd

    from ._event_table import HeadedTable

    frame = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows), columns=columns)
    table = HeadedTable(frame.set_index(index) if index else frame)
    table.headings = dict(EVENT_HEADINGS if headings is None else headings)
    return table


def table(trace: Trace | Iterable[Event], *, times: bool = False, **filters: Any) -> EventTable:
    """One readable row per event; `times=True` adds milliseconds since the run began (notebook 00)."""
    import pandas as pd

    from ._event_table import EventTable

    rows = [
        {
            "seq": e.seq,
            "round": e.round,
            "from": e.src,
            "to": e.dst,
            "kind": e.kind,
            "summary": e.summary,
            "name": e.name or "",
            "server": e.meta.get(Meta.SERVER, ""),
            "id": "" if e.ref is None else str(e.ref),
            **({"ms": round(e.t * 1000, 1)} if times else {}),
        }
        for e in select(trace, **filters)
    ]
    return EventTable(pd.DataFrame(rows, columns=_TABLE_COLUMNS + (["ms"] if times else [])).set_index("seq"))


class Diagram:
    """A Mermaid sequence diagram that JupyterLab renders offline, with a picture for every other viewer (notebook 00).

    The display carries the Mermaid source as a fenced block of Markdown, a PNG drawn by matplotlib from
    the same events (for viewers without Mermaid), and the source as text. JupyterLab 4.6 ranks Markdown
    60 and images 90, and shows the lowest rank present: its Markdown renderer draws the diagram. Not
    `text/vnd.mermaid`: that renderer writes the SVG it drew back into the output, so a notebook opened
    and saved unedited would change with the browser's fonts.
    """

    def __init__(self, source: str, events: list[Event] | None = None) -> None:
        self.source = source
        self.events = events

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        bundle = {"text/markdown": f"```mermaid\n{self.source}\n```", "text/plain": self.source}
        if self.events:
            bundle["image/png"] = base64.b64encode(display_png(self.events)).decode("ascii")
        return bundle

    def __str__(self) -> str:
        return self.source

    def save(self, path: str) -> str:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(self.source + "\n")
        return path


# Six lifelines are scaled down to fit a notebook cell; larger text and narrower boxes keep labels ≥ 11 px there.
_MERMAID_INIT = (
    '%%{init: {"sequence": {"messageFontSize": 21, "noteFontSize": 19, "actorFontSize": 18, '
    '"width": 110, "actorMargin": 24, "diagramMarginX": 8}}}%%'
)


def sequence_diagram(trace: Trace | Iterable[Event], *, numbered: bool = True, **filters: Any) -> Diagram:
    """The events as a Mermaid `sequenceDiagram`, arrows in recorded order (notebook 00).

    Requests are solid arrows, replies dashed, an actor's own decisions are notes; a new round
    starts with a note across the diagram. Labels are short (two lines at most); `numbered`
    prefixes each with its `seq`, the row of `table(trace)` that holds the whole text.
    """
    events = select(trace, **filters)
    present = {a for e in events for a in (e.src, e.dst)}
    lines = [_MERMAID_INIT, "sequenceDiagram"]
    lines += [f"    participant {a} as {_(ACTOR_LABELS[a])}" for a in ACTORS if a in present]
    current_round = None
    first, last = _span(present)
    for e in events:
        if e.round != current_round and first:
            current_round = e.round
            lines.append(f"    Note over {first},{last}: " + _("round {n}").format(n=e.round))
        lines_of = diagram_label(f"[{e.seq}] {e.summary}" if numbered else e.summary)
        text = "<br/>".join(_mermaid_text(line) for line in lines_of)
        if e.src == e.dst:
            lines.append(f"    Note over {e.src}: {text}")
        else:
            arrow = "-->>" if e.is_reply else "->>"
            lines.append(f"    {e.src}{arrow}{e.dst}: {text}")
    return Diagram("\n".join(lines), events)


def pretty(event: Event, *, limit: int = 240) -> str:
    """One event's full payload as indented JSON, long strings folded with a length marker (notebook 00)."""
    header = _("#{seq} round {round} {src} → {dst} {kind}").format(
        seq=event.seq, round=event.round, src=event.src, dst=event.dst, kind=event.kind
    )
    if event.ref is not None:
        header += f" id={event.ref}"
    body = json.dumps(_fold_strings(event.payload, limit), indent=2, ensure_ascii=False)
    return f"{header}\n{body}"


def _fold_strings(value: Any, limit: int) -> Any:
    if isinstance(value, str):
        return fold(value, limit)
    if isinstance(value, dict):
        return {k: _fold_strings(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [_fold_strings(v, limit) for v in value]
    return value


def _span(present: Set[str]) -> tuple[str | None, str | None]:
    ordered = [a for a in ACTORS if a in present]
    return (ordered[0], ordered[-1]) if ordered else (None, None)


def _mermaid_text(text: str) -> str:
    return text.translate(_MERMAID_ESCAPES)
