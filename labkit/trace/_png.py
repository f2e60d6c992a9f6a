"""The sequence diagram drawn with matplotlib, for exports, the CLI and viewers without Mermaid."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._events import ACTORS, Event, Trace
from ._views import ACTOR_LABELS, diagram_label, select

__all__ = ["save_png"]

_COLORS = {
    "user": "#4c72b0",
    "host": "#55a868",
    "model": "#c44e52",
    "client": "#8172b2",
    "server": "#ccb974",
    "system": "#64b5cd",
}


def save_png(trace: Trace | Iterable[Event], path: str | Path, *, dpi: int = 80, **filters: Any) -> Path:
    """Draw the trace as a sequence diagram and write it as a PNG (notebook 03; `python -m labkit`)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    events = select(trace, **filters)
    actors = [a for a in ACTORS if any(a in (e.src, e.dst) for e in events)] or list(ACTORS)
    column = {a: i * 2.0 for i, a in enumerate(actors)}
    # 80 dpi, 10 pt: six actors are 1,020 px wide (a notebook cell) and the labels 11 px.
    height = 1.2 + 0.5 * len(events)
    fig, ax = plt.subplots(figsize=(2.0 * len(actors) + 0.8, height))
    ax.set_xlim(-1.0, column[actors[-1]] + 1.0)
    ax.set_ylim(-len(events) - 0.8, 1.2)
    ax.axis("off")
    for actor, x in column.items():
        ax.plot([x, x], [0.4, -len(events) - 0.5], color=_COLORS[actor], lw=1, ls=":")
        ax.text(x, 0.75, ACTOR_LABELS[actor], ha="center", va="center", fontsize=10, color="white",
                fontweight="bold", bbox={"boxstyle": "round", "fc": _COLORS[actor], "ec": "none"})
    for row, event in enumerate(events, start=1):
        _draw_event(ax, event, -row, column)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, metadata={"Software": None})
    plt.close(fig)
    return path


def _draw_event(ax: Any, event: Event, y: float, column: dict[str, float]) -> None:
    label = "\n".join(diagram_label(f"[{event.seq}] {event.summary}"))
    x0, x1 = column[event.src], column[event.dst]
    if x0 == x1:
        ax.text(x0, y + 0.4, label, ha="center", va="center", fontsize=10,  # in the band an arrow label uses
                bbox={"boxstyle": "square", "fc": "#fff8dc", "ec": "#999999", "lw": 0.5})
        return
    style = "--" if event.is_reply else "-"
    ax.annotate("", xy=(x1, y), xytext=(x0, y),
                arrowprops={"arrowstyle": "-|>", "ls": style, "color": _COLORS[event.src], "lw": 1})
    ax.text((x0 + x1) / 2, y + 0.08, label, ha="center", va="bottom", fontsize=10)
