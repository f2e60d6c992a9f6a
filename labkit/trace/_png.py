"""The sequence diagram drawn with matplotlib, for exports, the CLI and viewers without Mermaid."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .._i18n import _
from ._events import ACTORS, Actor, Event, Trace
from ._labels import ACTOR_LABELS, diagram_label
from ._select import select

# The lab's matplotlib style, shared with the charts server: DejaVu Sans with a CJK fallback.
_STYLE = Path(__file__).resolve().parents[2] / "lab.mplstyle"

__all__ = ["display_png", "png_bytes", "save_png"]

# A committed notebook carries one picture per diagram: 32 colours and ≤ 60 kB keep it small.
_DISPLAY_COLORS, _DISPLAY_BUDGET = 32, 60_000

_COLORS = {
    "user": "#4c72b0",
    "host": "#55a868",
    "model": "#c44e52",
    "client": "#8172b2",
    "server": "#ccb974",
    "system": "#64b5cd",
    "auth": "#8c8c8c",
}


def save_png(trace: Trace | Iterable[Event], path: str | Path, *, dpi: int = 80, **filters: Any) -> Path:
    """Draw the trace as a sequence diagram and write it as a PNG (notebook 03; `python -m labkit`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png_bytes(select(trace, **filters), dpi=dpi))
    return path


def display_png(events: list[Event]) -> bytes:
    """The picture a Mermaid display carries: 32 colours at 80 dpi, or 60 dpi for a long trace (notebook 00)."""
    picture = png_bytes(events, colors=_DISPLAY_COLORS)
    return picture if len(picture) <= _DISPLAY_BUDGET else png_bytes(events, dpi=60, colors=_DISPLAY_COLORS)


def png_bytes(events: list[Event], *, dpi: int = 80, colors: int | None = None) -> bytes:
    """The sequence diagram of `events` as PNG bytes: the picture a Mermaid display carries (notebook 00)."""
    import io

    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    with matplotlib.rc_context(fname=_STYLE):  # a Chinese label is drawn in a CJK font, not as boxes
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
            ax.text(
                x,
                0.75,
                _(ACTOR_LABELS[actor]),
                ha="center",
                va="center",
                fontsize=10,
                color="white",
                fontweight="bold",
                bbox={"boxstyle": "round", "fc": _COLORS[actor], "ec": "none"},
            )
        for row, event in enumerate(events, start=1):
            _draw_event(ax, event, -row, column)
        fig.tight_layout()
        if colors is None:
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
            plt.close(fig)
            return buffer.getvalue()
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from PIL import Image  # matplotlib's own dependency

        # Drawn straight into pixels, as savefig would at this dpi, without writing a PNG only to read it back.
        fig.set_dpi(dpi)
        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        pixels = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        plt.close(fig)
    quantized = io.BytesIO()
    # Fast octree keeps each actor's colour; median cut, PIL's default, averaged them toward grey.
    palette = pixels.convert("RGB").quantize(colors=colors, method=Image.Quantize.FASTOCTREE)
    palette.save(quantized, format="PNG", optimize=True)
    return quantized.getvalue()


def _draw_event(ax: Any, event: Event, y: float, column: Mapping[Actor, float]) -> None:
    label = "\n".join(diagram_label(f"[{event.seq}] {event.summary}"))
    x0, x1 = column[event.src], column[event.dst]
    if x0 == x1:
        ax.text(
            x0,
            y + 0.4,
            label,
            ha="center",
            va="center",
            fontsize=10,  # in the band an arrow label uses
            bbox={"boxstyle": "square", "fc": "#fff8dc", "ec": "#999999", "lw": 0.5},
        )
        return
    style = "--" if event.is_reply else "-"
    ax.annotate(
        "",
        xy=(x1, y),
        xytext=(x0, y),
        arrowprops={"arrowstyle": "-|>", "ls": style, "color": _COLORS[event.src], "lw": 1},
    )
    ax.text((x0 + x1) / 2, y + 0.08, label, ha="center", va="bottom", fontsize=10)
