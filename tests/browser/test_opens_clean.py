"""A pulled lab opens clean: lessons first in the file browser; a notebook saved unedited keeps its bytes."""

from __future__ import annotations

import json
import shutil
import urllib.request

import pytest

from .conftest import REPO, SCRATCH, until
from .test_lab_in_browser import open_notebook, shoot

pytest.importorskip("playwright.sync_api")
from playwright.sync_api import Page, expect

NOTEBOOKS = REPO / "notebooks"


def listing(page: Page) -> list[str]:
    items = page.locator(".jp-DirListing-content .jp-DirListing-itemText")
    expect(items.first).to_be_visible()
    return [name.strip() for name in items.all_text_contents()]


@pytest.mark.parametrize("folder", ["notebooks", "zh-CN/notebooks"])
def test_the_notebooks_folder_lists_lesson_00_before_every_other_file(page: Page, lab, folder: str) -> None:
    with urllib.request.urlopen(f"{lab.url}/lab/api/settings/@jupyterlab/filebrowser-extension:browser") as reply:
        defaults = json.load(reply)["schema"]["properties"]
    assert defaults["sortNotebooksFirst"]["default"] is True, "the lab's overrides.json is read"
    page.goto(f"{lab.url}/lab/tree/{folder}?reset")
    expect(page.locator(".jp-BreadCrumbs")).to_contain_text(folder.split("/")[-1])
    names = listing(page)
    shoot(page, f"file_browser_{folder.replace('/', '_')}", page.locator(".jp-FileBrowser"))
    # JupyterLab always lists folders first, so each edition's folder holds its lessons and nothing else.
    lessons = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    assert names[0] == "00_start_here.ipynb", names
    assert names == lessons, "the lessons only, in order"


@pytest.mark.parametrize("name", ["05_errors.ipynb", "00_start_here.ipynb"])  # 00 draws a Mermaid diagram
def test_a_committed_notebook_opens_clean_and_saving_it_unedited_changes_no_byte(page: Page, lab, name: str) -> None:
    # A byte copy in a scratch folder: the test saves, and a test never writes to the repo's own files.
    copy = SCRATCH / "open-save" / name
    copy.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(NOTEBOOKS / name, copy)
    committed = copy.read_bytes()
    panel = open_notebook(page, lab.url, copy.relative_to(REPO).as_posix())
    tab = page.locator(".lm-TabBar-tab.jp-mod-current[data-type='document-title']")
    expect(tab).to_contain_text(copy.name)
    page.wait_for_timeout(2_000)  # what JupyterLab changes on opening (ids, metadata) marks it dirty by now
    opened_dirty = "jp-mod-dirty" in (tab.get_attribute("class") or "")
    saved_before = copy.stat().st_mtime_ns
    panel.locator(".jp-Notebook").click(position={"x": 5, "y": 5})
    page.keyboard.press("Control+s")
    until(page, "Ctrl+S to save the file", lambda: copy.stat().st_mtime_ns != saved_before)
    shoot(page, f"saved_unedited_{copy.stem}", page)
    after = copy.read_bytes()
    changed = _first_difference(committed.decode(), after.decode()) if after != committed else None
    assert (opened_dirty, changed) == (False, None), "opened with the unsaved dot / saving unedited changed it"


def _first_difference(before: str, after: str) -> str:
    lines_before, lines_after = before.splitlines(), after.splitlines()
    for number, (old, new) in enumerate(zip(lines_before, lines_after, strict=False), 1):
        if old != new:
            return f"line {number}: {old.strip()[:120]!r} became {new.strip()[:120]!r}"
    return f"{len(lines_before)} lines became {len(lines_after)}"
