"""Every lesson of both editions as it opens, on a 1366x768 laptop: its stored outputs (which nbval proves a fresh run
prints), each diagram's labels and each table measured in JupyterLab and Chromium."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO, SHOTS, until
from .test_classroom import EDITIONS, LAPTOP, until_in_front
from .test_lab_in_browser import front, shoot
from .test_learner import MIN_LABEL_PX

pytest.importorskip("playwright.sync_api")
from playwright.sync_api import Locator, Page, expect

_SEEN_NOW = """panel => {
    const seen = {};
    for (const cell of panel.querySelectorAll('.jp-Cell')) {
      const at = cell.dataset.windowedListIndex ?? [...cell.parentElement.children].indexOf(cell);
      cell.querySelectorAll('.jp-RenderedMermaid img').forEach((img, n) => {
        const width = img.getBoundingClientRect().width;
        if (width > 0) seen[`diagram ${at}.${n}`] = [decodeURIComponent(img.src.split(',', 2)[1] || ''), width]; });
      cell.querySelectorAll('.jp-OutputArea-output table').forEach((table, n) => {
        const area = table.closest('.jp-OutputArea-output');
        let box = table.parentElement;
        while (box !== area && !['auto', 'scroll'].includes(getComputedStyle(box).overflowX)) box = box.parentElement;
        seen[`table ${at}.${n}`] = {cell: Number(at), kind: table.className || 'table',
          over_px: Math.round(table.getBoundingClientRect().width - area.clientWidth),
          scrolls_in_own_box: box !== area && box.getBoundingClientRect().width <= area.clientWidth + 0.5}; });
    }
    return seen; }"""


def survey(page: Page, panel: Locator, name: str) -> dict[str, Any]:
    """Scroll the notebook top to bottom as a learner does (JupyterLab draws only the cells near the view), and
    measure each diagram's smallest label in px and each table that is wider than its output area; the window is
    saved as `<name>_diagram` / `<name>_wide_table` when the first of each comes into view."""
    seen: dict[str, Any] = {}
    outer = panel.locator(".jp-WindowedPanel-outer")
    for _ in range(600):
        seen.update(panel.evaluate(_SEEN_NOW))
        for kind, first in (("diagram", "diagram"), ("wide_table", "table")):
            if not (SHOTS / f"{name}_{kind}.png").exists() and any(
                k.startswith(first) and (kind == "diagram" or v["over_px"] > 0) for k, v in seen.items()
            ):
                shoot(page, f"{name}_{kind}")
        # the notebook's own scroller, not the wheel: under the mouse, a long output's own box took the wheel's turns.
        # A view at a time, less a margin: every cell passes through the view (JupyterLab draws those it meets).
        outer.evaluate("o => o.scrollBy(0, Math.max(400, o.clientHeight - 80))")
        page.wait_for_timeout(150)
        if outer.evaluate("o => o.scrollTop + o.clientHeight >= o.scrollHeight - 2"):
            break
    page.wait_for_timeout(1000)
    seen.update(panel.evaluate(_SEEN_NOW))
    diagrams = [value for key, value in seen.items() if key.startswith("diagram")]
    tables = [value for key, value in seen.items() if key.startswith("table")]
    return {
        "label_px": _label_px(page, diagrams),
        "tables": len(tables),
        "tables_wider_than_output": [t for t in tables if t["over_px"] > 0],
    }


def stored_diagrams(notebook: Path) -> int:
    """How many sequence diagrams a notebook's stored outputs hold (each a mermaid block in a Markdown output)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    markdown = ["".join(o.get("data", {}).get("text/markdown", "")) for c in cells for o in c.get("outputs", [])]
    return sum(text.lstrip().startswith("```mermaid") for text in markdown)


def _label_px(page: Page, diagrams: list) -> list[float]:
    probe = page.context.new_page()
    sizes = []
    for svg, width in diagrams:
        probe.set_content("<body style='margin:0'></body>")
        sizes.append(
            round(
                probe.evaluate(
                    """([svg, width]) => { document.body.innerHTML = svg; const el = document.querySelector('svg');
               el.style.width = width + 'px'; el.style.maxWidth = width + 'px'; el.removeAttribute('height');
               return Math.min(...[...el.querySelectorAll('.messageText')].map(
                 t => parseFloat(getComputedStyle(t).fontSize) * t.getScreenCTM().a)); }""",
                    [svg, width],
                ),
                2,
            )
        )
    probe.close()
    return sizes


def fits_a_laptop(readable: dict[str, dict[str, Any]]) -> bool:
    """Every diagram's labels at least MIN_LABEL_PX, every table wider than its output area in a box of its own."""
    labels = [px for r in readable.values() for px in r["label_px"]]
    wide = [t for r in readable.values() for t in r["tables_wider_than_output"]]
    return all(px >= MIN_LABEL_PX for px in labels) and all(t["scrolls_in_own_box"] for t in wide)


# Opened with no kernel: what is measured is the stored outputs, which no kernel draws (22 kernels started and shut
# down for nothing, before).
_OPEN_STORED = """path => window.jupyterapp.commands.execute(
  'docmanager:open', {path, kernelPreference: {shouldStart: false, canStart: false}}).then(() => null)"""
_CLOSE = "() => FRONT().close()"


@pytest.mark.parametrize("edition", list(EDITIONS))
def test_every_lesson_is_readable_on_a_laptop(page: Page, lab, edition: str) -> None:
    """As each lesson opens (its stored outputs, which JupyterLab sanitizes): labels >= 11 px, no table cut off."""
    page.set_viewport_size(LAPTOP)
    folder, _ = EDITIONS[edition]
    readable = {}
    chosen = os.environ.get("CLASSROOM_LESSONS")
    # One JupyterLab page for the edition: each lesson is opened in it with no kernel and closed once surveyed, not a
    # page load and a kernel left running per lesson (136 CPU-s for the English lessons, 123 this way).
    page.goto(f"{lab.url}/lab?reset")
    expect(page.locator(".lm-MenuBar-itemLabel").first).to_be_visible()
    for lesson in sorted(p.stem for p in (REPO / folder).glob("[0-9][0-9]_*.ipynb")):
        if chosen and lesson[:2] not in chosen.split():
            continue
        path = f"{folder}/{lesson}.ipynb"
        page.evaluate(_OPEN_STORED, path)
        panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").filter(has=page.locator(".jp-Notebook")).first
        until_in_front(page, panel, path)
        notebook = REPO / path
        # every cell drawn (a lab that has just started draws a notebook's cells over seconds), then surveyed
        cells = len(json.loads(notebook.read_text(encoding="utf-8"))["cells"])
        until(page, f"{path}'s {cells} cells to be drawn", lambda: panel.locator(".jp-Cell").count() == cells)  # noqa: B023
        readable[lesson] = survey(page, panel, f"readable_{edition}_{lesson[:2]}")
        stored = stored_diagrams(notebook)
        assert len(readable[lesson]["label_px"]) == stored, f"{lesson}: {stored} diagrams stored, measured {readable}"
        page.evaluate(front(_CLOSE))
    (SHOTS / f"readable_{edition}.json").write_text(json.dumps(readable, indent=1))
    print(f"readability at 1366x768 ({edition}):", json.dumps(readable))
    assert readable and fits_a_laptop(readable), readable
