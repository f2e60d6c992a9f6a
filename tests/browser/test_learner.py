"""A learner in JupyterLab: Run All, nobody scripted; find each form where one looks, answer it, read the diagrams."""

from __future__ import annotations

import gettext
import json
import re
from urllib.parse import unquote

import pytest

from .conftest import PEEK_MS, REPO, SHOTS, until
from .test_classroom import form_key
from .test_lab_in_browser import (
    _forms,
    errors_in,
    memory_report,
    menu,
    open_notebook,
    renders_03,
    shoot,
    stayed_local_and_quiet,
    wait_idle,
)

pytest.importorskip("playwright.sync_api")
from playwright.sync_api import Locator, Page, expect

_DONE = re.compile(r"^\[\d+\]:$")
_CJK = re.compile(r"[\u4e00-\u9fff]")
MIN_LABEL_PX = 11.0  # in either language: labels are wrapped by display columns, a Chinese character takes two
# labkit's own Chinese catalog says what the form's buttons are called in the Chinese edition.
CHINESE = gettext.GNUTranslations((REPO / "labkit/locale/zh_CN/LC_MESSAGES/labkit.mo").open("rb"))


def visible_form(page: Page, panel: Locator, submit: str = "Submit") -> Locator:
    """The one waiting form, by its own class (`form_key`), once it is inside the window by itself (the learner scrolls
    nothing); waited for as long as the lab works (`until`)."""

    def in_view() -> Locator | None:
        for form in _forms(panel, submit).all():
            if form.get_by_role("button", name=submit).is_enabled() and _in_viewport(page, form):
                return panel.locator(f".{form_key(form)}")
        return None

    return until(
        page,
        lambda: (
            "a waiting form in view; the forms on the page say: "
            + str([f.locator(".widget-html").last.inner_text() for f in _forms(panel, submit).all()])
        ),
        in_view,
    )


def _in_viewport(page: Page, element: Locator) -> bool:
    box = element.bounding_box()
    size = page.viewport_size
    return box is not None and size is not None and box["y"] >= 0 and box["y"] + 40 <= size["height"]


def wait_all_done(page: Page, panel: Locator, path: str) -> None:
    """Wait until every code cell shows its execution count, each cell done within the lab's deadline (`until`)."""
    code_cells = sum(c["cell_type"] == "code" for c in json.loads((REPO / path).read_text())["cells"])
    done = -1

    def went_on() -> str | None:
        nonlocal done
        prompts = [p.strip() for p in panel.locator(".jp-CodeCell .jp-InputArea-prompt").all_text_contents()]
        now_done = sum(bool(_DONE.match(p)) for p in prompts)
        if len(prompts) == code_cells and now_done == code_cells:
            return "done"
        went, done = now_done > done, now_done
        return "on" if went else None

    while until(page, lambda: f"{path} to finish ({done} of {code_cells} cells done): {errors_in(panel)}", went_on) != (
        "done"
    ):
        pass
    wait_idle(page)


def label_px(page: Page, panel: Locator) -> tuple[float, list[float]]:
    """Each Mermaid diagram's arrow-label height as drawn in the notebook (the SVG at the image's width)."""
    heights: list[float] = []
    width = 0.0
    for image in panel.locator(".jp-RenderedMermaid img").all():
        image.scroll_into_view_if_needed()
        width = image.evaluate("img => img.getBoundingClientRect().width")
        svg = unquote(image.get_attribute("src") or "").split(",", 1)[1]
        probe = page.context.new_page()
        probe.set_content("<body style='margin:0'></body>")
        heights.append(
            probe.evaluate(
                """([svg, width]) => { document.body.innerHTML = svg; const el = document.querySelector('svg');
               el.style.width = width + 'px'; el.style.maxWidth = width + 'px'; el.removeAttribute('height');
               const sizes = [...el.querySelectorAll('.messageText')].map(t => parseFloat(getComputedStyle(t).fontSize)
                 * t.getScreenCTM().a);
               return Math.min(...sizes); }""",
                [svg, width],
            )
        )
        probe.close()
    return width, heights


def table_overflow(panel: Locator) -> list[float]:
    """How far each event table sticks out of its output area, in px (0 = it fits)."""
    return [
        t.evaluate("t => Math.max(0, t.getBoundingClientRect().width - t.closest('.jp-OutputArea').clientWidth)")
        for t in panel.locator("table.labkit-events").all()
    ]


def test_03_run_all_brings_the_form_into_view_run_all_again_replaces_it_and_a_click_answers_it(
    page: Page, lab, guard
) -> None:
    """03 run as a learner runs it (Run All, and Run All again while its form waits), then what it renders and that
    nothing left the machine (its memory is held to the Binder budget by the one run of test_zh_03)."""
    path = "notebooks/03_nineteen_steps.ipynb"
    panel = open_notebook(page, lab.url, path)
    menu(page, "Edit", "Clear Outputs of All Cells")
    menu(page, "Run", "Run All Cells")
    first = visible_form(page, panel)
    shoot(page, "learner_03_first_form_in_view")
    expect(first).to_contain_text("round 2 of the render_error_trend call to the charts server, 2026-07-28")
    assert first.get_by_role("radio", name="personal").is_checked(), "the schema's default is preselected"
    # The natural reaction to a run that seems stuck: Run All again. JupyterLab clears the waiting form.
    menu(page, "Run", "Run All Cells")
    until(page, "the first form to be cleared by Run All again", lambda: first.count() == 0)
    again = visible_form(page, panel)
    shoot(page, "learner_03_form_after_run_all_again")
    expect(again).to_contain_text("this is the new run's form: the earlier one was declined")
    expect(panel.get_by_text("You ran the cells again while a form was waiting")).to_have_count(1)
    again.get_by_role("radio", name="team").check()
    again.get_by_role("button", name="Submit").click()
    until(
        page,
        "the form to say it was submitted",
        lambda: expect(again).to_contain_text("submitted: {'space': 'team'}", timeout=PEEK_MS) or True,
    )
    wait_all_done(page, panel, path)
    assert errors_in(panel) == []
    expect(panel.locator(".jp-OutputArea-output").filter(has_text="saved to spaces/team/").first).to_be_visible()
    renders_03(page, panel)
    diagrams_and_tables_fit(page, panel, "03")
    stayed_local_and_quiet(page, lab, guard, control=True)


def test_00_diagram_labels_and_tables_fit_the_cell(page: Page, lab) -> None:
    """00's outputs as stored (nbval proves a fresh run prints them; 00 is run in JupyterLab by the classroom test)."""
    path = "notebooks/00_start_here.ipynb"
    panel = open_notebook(page, lab.url, path)
    cells = len(json.loads((REPO / path).read_text(encoding="utf-8"))["cells"])
    # every cell drawn (a lab just started draws them slowly)
    until(page, f"{path}'s {cells} cells to be drawn", lambda: panel.locator(".jp-Cell").count() == cells)
    diagrams_and_tables_fit(page, panel, "00")


def diagrams_and_tables_fit(page: Page, panel: Locator, name: str) -> None:
    """Every diagram's labels are readable at 100% and no event table sticks out; screenshots and numbers saved."""
    width, heights = label_px(page, panel)
    shoot(
        page,
        f"learner_{name}_diagram_at_100",
        panel.locator(".jp-Cell").filter(has=page.locator(".jp-RenderedMermaid")),
    )
    overflow = table_overflow(panel)
    panel.locator("table.labkit-events").first.scroll_into_view_if_needed()
    shoot(page, f"learner_{name}_event_table", page)
    (SHOTS / f"learner_{name}_measures.json").write_text(
        json.dumps({"diagram_width_px": width, "label_px": heights, "table_overflow_px": overflow}, indent=1)
    )
    assert heights and min(heights) >= MIN_LABEL_PX, heights
    assert max(overflow, default=0) == 0, overflow


def test_zh_03_the_chinese_edition_shows_its_form_diagram_table_and_chart_in_chinese(page: Page, lab, memory) -> None:
    """03 in Chinese, run once from a fresh kernel (Run All, one click): what it draws speaks Chinese, and the peak
    memory of its kernel and servers is held to the Binder budget (`memory_report`: screenshots/memory_03.json)."""
    path = "zh-CN/notebooks/03_nineteen_steps.ipynb"
    submit = CHINESE.gettext("Submit")
    assert _CJK.search(submit), "the catalog translates the form's button"
    panel = open_notebook(page, lab.url, path)
    menu(page, "Edit", "Clear Outputs of All Cells")
    menu(page, "Run", "Run All Cells")
    form = visible_form(page, panel, submit=submit)
    assert _CJK.search(form.inner_text()), "the form speaks Chinese"
    shoot(page, "zh_03_form", form)
    form.get_by_role("radio", name="team").check()
    form.get_by_role("button", name=submit).click()
    wait_all_done(page, panel, path)
    memory.stop()
    assert errors_in(panel) == []
    memory_report(memory, "03")

    diagram = panel.locator(".jp-RenderedMermaid img").first
    diagram.scroll_into_view_if_needed()
    assert _CJK.search(unquote(diagram.get_attribute("src") or "")), "the diagram's labels are Chinese"
    table = panel.locator("table.labkit-events").first
    table.scroll_into_view_if_needed()
    expect(table, "the event table is Chinese").to_contain_text(_CJK)  # retried: its output may still be rendering
    chart = panel.locator(".jp-RenderedImage img").last
    chart.scroll_into_view_if_needed()
    assert chart.evaluate("img => img.complete && img.naturalWidth >= 400"), "the chart PNG loaded"
    shoot(page, "zh_03_chart", panel.locator(".jp-Cell").filter(has=page.locator(".jp-RenderedImage img")).last)
    diagrams_and_tables_fit(page, panel, "zh_03")
