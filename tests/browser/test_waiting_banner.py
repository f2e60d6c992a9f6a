"""The "a form is waiting" banner in a page of our own (no JupyterLab, seconds to run): one per notebook while any
of its forms waits, whatever the number of forms or of runs of their cells, and none once nothing waits."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from .conftest import LAB_PYTHON

pytest.importorskip("playwright.sync_api")
from playwright.sync_api import Page, expect

# Two notebooks as JupyterLab draws them, as far as the script looks: a panel, its toolbar, its scrolled cells.
_NOTEBOOKS = """<body style="margin:0">""" + "".join(
    f"""<div class="jp-NotebookPanel" id="{name}" style="height:380px">
      <div class="jp-NotebookPanel-toolbar" style="display:flex;height:28px"><div class="jp-Toolbar-spacer"></div></div>
      <div class="jp-WindowedPanel-outer" style="height:350px;overflow:auto"><div style="height:2000px"></div></div>
    </div>"""
    for name in ("first", "second")
)
# Every change of the page is watched: the most banners a notebook ever had at once, not only at the end.
_WATCH_BANNERS = """() => { window.mostBanners = {};
  const count = () => { for (const panel of document.querySelectorAll('.jp-NotebookPanel')) {
    const n = panel.querySelectorAll('.labkit-waiting-banner').length;
    window.mostBanners[panel.id] = Math.max(window.mostBanners[panel.id] || 0, n); } };
  new MutationObserver(count).observe(document.body, {childList: true, subtree: true}); }"""
# A form drawn at the end of a notebook's cells, its script run as JupyterLab runs a Javascript output.
_DRAW = """([notebook, key, script]) => {
  const form = document.createElement('div');
  form.className = 'labkit-form labkit-waiting ' + key;
  form.innerHTML = '<button>Submit</button><div class="labkit-form-status"></div>';
  document.querySelector('#' + notebook + ' .jp-WindowedPanel-outer > div').append(form);
  (0, eval)(script); }"""


def page_scripts(count: int) -> list[dict[str, Any]]:
    """`count` forms' keys and page scripts, made by labkit's own WaitingForm in the lab's Python."""
    code = (
        "import json, ipywidgets as w\nfrom labkit.host._waiting import WaitingForm\n"
        f"forms = [WaitingForm(w.VBox(), w.HTML(), (), subject='q') for _ in range({count})]\n"
        "print(json.dumps([{'key': f.key, 'script': f.page_script()} for f in forms]))"
    )
    made = subprocess.run([str(LAB_PYTHON), "-c", code], capture_output=True, text=True, check=True)
    return json.loads(made.stdout)


def draw(page: Page, notebook: str, form: dict[str, Any]) -> None:
    page.evaluate(_DRAW, [notebook, form["key"], form["script"]])


def banners(page: Page, notebook: str):
    return page.locator(f"#{notebook} .labkit-waiting-banner")


def test_one_banner_per_notebook_whatever_the_forms_and_their_runs(bare_page: Page) -> None:
    page = bare_page
    page.set_content(_NOTEBOOKS)
    page.evaluate("document.title = 'lesson'")
    page.evaluate(_WATCH_BANNERS)
    asked, again, twice, other = page_scripts(4)
    draw(page, "first", asked)
    expect(banners(page, "first")).to_have_count(1)
    expect(banners(page, "second")).to_have_count(0)
    # The learner runs the form's cell again: JupyterLab clears its output (the form is gone from the page) and the
    # new run draws a new form; then a third form waits beside it, and one in the other notebook.
    page.evaluate("key => document.querySelector('.' + key).remove()", asked["key"])
    draw(page, "first", again)
    draw(page, "first", twice)
    draw(page, "second", other)
    page.wait_for_timeout(1500)  # the old forms' scripts and the new ones have all ticked several times
    expect(banners(page, "first")).to_have_count(1)
    expect(banners(page, "second")).to_have_count(1)
    assert page.evaluate("window.mostBanners") == {"first": 1, "second": 1}
    assert page.title().count("·") == 1, page.title()  # the tab's title says it once too
    # Answered: the first notebook waits no more and says so no more; the second still waits.
    for form in (again, twice):
        page.evaluate("key => document.querySelector('.' + key).classList.remove('labkit-waiting')", form["key"])
    expect(banners(page, "first")).to_have_count(0)
    expect(banners(page, "second")).to_have_count(1)
    page.evaluate("key => document.querySelector('.' + key).classList.remove('labkit-waiting')", other["key"])
    expect(banners(page, "second")).to_have_count(0)
    expect(page).to_have_title("lesson")
