"""Notebook 04 in a real JupyterLab and Chromium: run it, answer each form by clicking, check what it saved; and the
helpers the browser tests drive JupyterLab with (03 is run by test_learner.py, which checks what it renders here)."""

from __future__ import annotations

import gettext
import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote

import pytest

from .conftest import LAB_PYTHON, REPO, SHOTS, kept_log, repo_writes, until

pytest.importorskip("playwright.sync_api")
from playwright.sync_api import Locator, Page, expect

_DONE = re.compile(r"^\[\d+\]:$")
# The Chinese edition opens JupyterLab in Chinese (the lab's pinned language pack): its menus and status bar say so.
_PACK = "import jupyterlab_language_pack_zh_CN as p, pathlib; print(pathlib.Path(p.__file__).parent)"
_JUPYTERLAB_ZH = gettext.GNUTranslations(
    (
        Path(subprocess.check_output([LAB_PYTHON, "-c", _PACK], text=True).strip())
        / "locale/zh_CN/LC_MESSAGES/jupyterlab.mo"
    ).open("rb")
)


def jupyterlab_chinese(text: str) -> str:
    """JupyterLab's `text` (a menu item, a status) as its Chinese language pack shows it."""
    chinese = _JUPYTERLAB_ZH.pgettext("menu", text)
    return _JUPYTERLAB_ZH.gettext(text) if chinese == text else chinese


def jupyterlab_label(text: str) -> str:
    """A pattern for JupyterLab's `text` as either edition shows it: English, or the language pack's Chinese."""
    return f"(?:{re.escape(text)}|{re.escape(jupyterlab_chinese(text))})"


def open_notebook(page: Page, lab_url: str, path: str) -> Locator:
    """Open `path` alone (`?reset` ignores any saved workspace) and wait for its kernel to be idle."""
    page.goto(f"{lab_url}/lab/tree/{path}?reset")
    panel = page.locator(".jp-NotebookPanel").filter(has=page.locator(".jp-Notebook")).first
    until(page, f"{path} to open", panel.is_visible)
    wait_idle(page)
    return panel


# The notebook the learner sees (the visible notebook of the main area), as a JavaScript expression: not the shell's
# current widget, which while JupyterLab restores the lessons left open can be another lesson than the one shown.
FRONT = "(() => [...window.jupyterapp.shell.widgets('main')].find(w => w.isVisible && w.content?.widgets))"


def front(script: str) -> str:
    """`script` with FRONT() standing for the notebook the learner sees."""
    return script.replace("FRONT()", FRONT + "()")


# The notebook in front: its kernel's status ('idle', 'busy', 'dead'...; null while it has none), what JupyterLab
# shows for it ('starting' while the server starts it too), and whether JupyterLab asks the learner to pick a kernel
# (it does when starting one failed).
_KERNEL = """() => { const context = FRONT()?.sessionContext;
  return {status: context?.session?.kernel?.status ?? null, shown: context?.kernelDisplayStatus ?? null,
          asks: document.querySelector('.jp-Dialog') !== null && !!context?.hasNoKernel}; }"""
_WORKING = ("starting", "initializing", "connecting", "restarting", "autorestarting", "terminating", "busy")


def kernel_status(page: Page) -> str | None:
    """The state of the kernel of the notebook in front, as its kernel last reported it (busy, idle, ...)."""
    return page.evaluate(front(_KERNEL))["status"]


def wait_idle(page: Page, *, any_kernel: bool = False) -> None:
    """Wait, as long as the lab works (`until`), until the notebook in front has its own kernel and it is idle (or in
    any state, if `any_kernel`: a reopened tab shows a kernel busy on a form as 'unknown' for minutes): not the status
    bar's words, which can be another notebook's while this one's starts."""
    seen: dict = {}

    def ready() -> bool:
        seen.update(kernel := page.evaluate(front(_KERNEL)))
        if kernel["asks"]:
            # JupyterLab asks which kernel when it had none to start: its kernel list not yet loaded, or the server
            # gave up on a slow start (both seen on a loaded machine). The learner presses Select (this notebook's).
            print(f"JupyterLab asked for a kernel (see {kept_log()}): Select pressed", flush=True)
            shoot(page, "kernel_asked_for")
            page.locator(".jp-Dialog .jp-mod-accept").click()
            return False
        if kernel["status"] == "dead":
            pytest.fail(f"the notebook's kernel died: see {kept_log()}")
        return kernel["status"] == "idle" or (any_kernel and kernel["status"] is not None)

    until(page, lambda: f"a kernel for the notebook in front (it has {seen})", ready)


# How many code cells of the notebook in front are queued or running ([*]), read from JupyterLab's cell models: the
# window draws only the cells near the view, so a run's prompts further down are not on the page.
_CELLS_RUNNING = """() => (FRONT()?.content?.widgets ?? []).filter(
  cell => cell.model.type === 'code' && cell.model.executionState === 'running').length"""


def cells_running(page: Page) -> int:
    return page.evaluate(front(_CELLS_RUNNING))


def menu(page: Page, top: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{jupyterlab_label(top)}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{jupyterlab_label(item)}$")).first.click()


def run_all(
    page: Page,
    panel: Locator,
    path: str,
    *,
    answer: str | None = None,
    on_form: Callable[[], object] | None = None,
) -> list[str]:
    """Clear every output, Run All, click `answer` + Submit in each form that appears; the forms' last words."""
    code_cells = sum(c["cell_type"] == "code" for c in json.loads((REPO / path).read_text())["cells"])
    menu(page, "Edit", "Clear Outputs of All Cells")
    expect(panel.locator(".jp-OutputArea-output")).to_have_count(0)
    menu(page, "Run", "Run All Cells")
    answered: list[str] = []
    stalled = done = 0

    def next_step() -> Locator | str | None:
        """A form waiting for its answer; "done" once every cell has run; "on" when the run went on (a cell done)."""
        nonlocal stalled, done
        if forms := _open_forms(panel):
            return forms[0]
        prompts = [p.strip() for p in panel.locator(".jp-CodeCell .jp-InputArea-prompt").all_text_contents()]
        if len(prompts) == code_cells and all(_DONE.match(p) for p in prompts):
            return "done"
        # Run All stops at a cell that raised: nothing queued, the kernel idle, no form waiting.
        stalled = stalled + 1 if "[*]:" not in prompts and _idle(page) else 0
        if stalled >= 10:
            pytest.fail(f"{path} stopped after cell {prompts.index('[ ]:')} of {code_cells}: {errors_in(panel)}")
        went_on, done = (now_done := sum(bool(_DONE.match(p)) for p in prompts)) > done, now_done
        return "on" if went_on else None

    # each step of the run (a cell done, a form answered) within the lab's deadline
    while (
        step := until(page, lambda: f"{path}'s Run All to go on ({done} of {code_cells} cells done)", next_step)
    ) != ("done"):
        if isinstance(step, str):
            continue
        step.scroll_into_view_if_needed()
        step.get_by_role("radio", name=answer).check()
        if on_form is not None and not answered:
            on_form()
        step.get_by_role("button", name="Submit").click()
        expect(step.get_by_role("button", name="Submit")).to_be_disabled()
        answered.append(step.locator(".widget-html").last.inner_text())  # the form's status line
    wait_idle(page)
    return answered


def _idle(page: Page) -> bool:
    return page.evaluate(front(_KERNEL))["status"] == "idle"


def errors_in(panel: Locator) -> list[str]:
    return panel.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").all_inner_texts()


def shoot(page: Page, name: str, target: Locator | Page | None = None) -> Path:
    """`screenshots/<name>.png`: the window, or one element scrolled into view."""
    SHOTS.mkdir(exist_ok=True)
    path = SHOTS / f"{name}.png"
    if target is None or target is page:
        page.screenshot(path=str(path), full_page=True)
    else:
        target.first.scroll_into_view_if_needed()
        target.first.screenshot(path=str(path))
    return path


def _forms(panel: Locator, submit: str = "Submit") -> Locator:
    """The elicitation forms: a VBox holding a Submit button (a `has=` locator is relative, so built from the page)."""
    return panel.locator(".widget-vbox").filter(has=panel.page.get_by_role("button", name=submit))


def _cell_of(panel: Locator, inner: str) -> Locator:
    return panel.locator(".jp-Cell").filter(has=panel.page.locator(inner))


def _open_forms(panel: Locator) -> list[Locator]:
    forms = _forms(panel)
    return [f for f in forms.all() if f.get_by_role("button", name="Submit").is_enabled()]


def memory_report(memory, notebook: str) -> None:
    """Write `screenshots/memory_NN.json` and hold the kernel and its servers to the Binder budget."""
    report = memory.report()
    (SHOTS / f"memory_{notebook}.json").write_text(json.dumps(report, indent=1))
    print(f"memory while running notebook {notebook}:", report)
    # Held on PSS, what the pod is charged: the lab's servers are forked from the kernel's warm Python and share
    # its pages, which a sum of RSS counts once per process (04: 632 MB summed RSS, 456 MB PSS).
    assert report["kernel_tree_peak_pss_mb"] <= MEMORY_LIMIT_MB, report


ACTORS = ("User", "Host", "Model", "MCP client", "MCP server", "Business system")
MEMORY_LIMIT_MB = float(os.environ.get("LAB_MEMORY_LIMIT_MB", "600"))  # Binder gives about 2 GB in all


def renders_03(page: Page, panel: Locator) -> None:
    """03's run as drawn: the sequence diagram with every actor, the event table (what explains first, a row per
    event), the chart; each saved as a screenshot (`test_learner.py`'s lesson-03 run)."""
    diagram = panel.locator(".jp-RenderedMermaid img").first
    diagram.scroll_into_view_if_needed()
    expect(diagram).to_be_visible()
    svg = unquote(diagram.get_attribute("src") or "")
    assert svg.startswith("data:image/svg+xml") and "sequence" in svg
    assert [actor for actor in ACTORS if f">{actor}<" not in svg] == [], "every actor is drawn"
    assert diagram.evaluate("img => img.complete && img.naturalWidth > 0")
    shoot(page, "03_mermaid_sequence_diagram", _cell_of(panel, ".jp-RenderedMermaid img"))
    natural = page.context.new_page()  # the same picture at its own size, to read the arrows
    width = re.search(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+)', svg)
    natural.set_content("<body style='margin:0'></body>")
    natural.evaluate(
        "([src, width]) => { const img = new Image(); img.src = src; img.style.width = width + 'px';"
        " document.body.append(img); return img.decode(); }",
        [diagram.get_attribute("src"), float(width.group(1)) if width else 2000],
    )
    shoot(natural, "03_mermaid_full_size", natural)
    natural.close()

    table = panel.locator("table.labkit-events").filter(has_text="render_error_trend").first
    table.scroll_into_view_if_needed()
    headers = [h.strip() for h in table.locator("thead th").all_text_contents()]
    assert headers[:5] == ["seq", "round", "from → to", "kind", "summary"], "what explains comes first"
    assert table.locator("tbody tr").count() >= 30, "one row per event of the run"
    table.locator("thead").scroll_into_view_if_needed()
    shoot(page, "03_trace_table", page)

    chart = panel.locator(".jp-RenderedImage img").first
    chart.scroll_into_view_if_needed()
    assert chart.evaluate("img => img.complete && img.naturalWidth >= 400"), "the chart PNG loaded"
    shoot(page, "03_chart", _cell_of(panel, ".jp-RenderedImage img"))


def stayed_local_and_quiet(page: Page, lab, guard, *, control: bool = False) -> None:
    """Every request and WebSocket went to the lab (one seen), no news pop-up, nothing saved in the repo; with
    `control`, a request that would leave the machine is shown to be caught and logged by the same guard."""
    assert guard.only_local(), (guard.blocked, guard.sockets)
    assert guard.sockets, "the kernel's WebSocket was seen (and checked)"
    assert page.locator(".Toastify__toast", has_text=re.compile("news|update", re.I)).count() == 0, "no pop-ups"
    assert repo_writes(lab) == [], "the test never writes to the repo"
    if control:
        assert page.evaluate(
            "() => fetch('https://cdn.jsdelivr.net/npm/mermaid').then(() => 'sent', () => 'aborted')"
        ) == "aborted" and guard.blocked == ["https://cdn.jsdelivr.net/npm/mermaid"]


def test_04_the_learner_answers_team_and_the_run_saves_there(page: Page, lab, guard, memory) -> None:
    path = "notebooks/04_elicitation.ipynb"
    cells = json.loads((REPO / path).read_text())["cells"]
    forms = sum("widget_form(" in "".join(c["source"]) for c in cells if c["cell_type"] == "code")
    started = time.time()
    panel = open_notebook(page, lab.url, path)
    answered = run_all(page, panel, path, answer="team", on_form=lambda: shoot(page, "04_form_team_chosen"))
    memory.stop()
    assert answered == ["submitted: {'space': 'team'}"] * forms, "every form was answered by a click on team"
    assert errors_in(panel) == []
    # the run went on after the click: round 2 completed and the server saved the chart in the team space
    result = panel.locator(".jp-OutputArea-output").filter(has_text="'path': 'spaces/team/").first
    expect(result).to_contain_text("'space': 'team'")
    saved = [p for p in (lab.data / "spaces" / "team").glob("*.png") if p.stat().st_mtime >= started]
    assert saved and all(p.read_bytes()[:4] == b"\x89PNG" for p in saved)
    shoot(page, "04_form_answered", _forms(panel).first)
    shoot(page, "04_saved_in_team_space", _cell_of(panel, ".jp-OutputArea-output:has-text(\"'path': 'spaces/team/\")"))
    memory_report(memory, "04")
    stayed_local_and_quiet(page, lab, guard)
