"""Execute the lab's notebooks in place, deterministically, and strip what varies from run to run.

    python tools/notebooks.py notebooks/00_start_here.ipynb [more.ipynb ...]

A lesson given with its solution runs as nbval runs the pair (`tests/nbval_pairs.py`): in one kernel, the
lesson, then the solution's cells from its first exercise on; the solution stores the lesson's outputs for the
cells before, so the two agree even where a run prints what differs between runs (ports, in notebook 09).
Cells run in the notebook's folder with the scripted user answering forms (as under CI). Stored:
outputs and execution counts, as nbformat 4.5 with cell ids derived from the cell's position, and the
kernelspec and language_info as JupyterLab writes them when it connects the kernel (so it opens and
saves the notebook without a change). Dropped: execution timing metadata and widget
state and views (a widget is stored as its one-line text), so that a re-run of an unchanged
notebook changes no bytes.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

from labkit._i18n import folder_language, in_language
from labkit._time_limits import scaled
from labkit.host._waiting import FORM_FALLBACK

_KERNEL = "python3"
_KEEP_CELL_METADATA = ("tags",)
_WIDGET = "application/vnd.jupyter.widget-view+json"
# labkit's own words for a widget that shows only in JupyterLab, in the notebook's language.
_WIDGET_TEXT = FORM_FALLBACK


def execute(path: Path, solution: Path | None = None) -> float:
    """Run `path` in place; with its `solution`, run the pair in one kernel and store both."""
    notebook = nbformat.read(path, as_version=4)
    lesson_cells = len(notebook.cells)
    answered = nbformat.read(solution, as_version=4) if solution is not None else None
    start = _first_exercise(answered) if answered is not None else 0
    if answered is not None:
        notebook.cells += copy.deepcopy(answered.cells[start:])
    os.environ["LABKIT_SCRIPTED_USER"] = "1"
    started = time.monotonic()
    NotebookClient(
        notebook,
        timeout=round(scaled(600)),
        kernel_name=_KERNEL,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    ran = notebook.cells
    notebook.cells = ran[:lesson_cells]
    strip(notebook, folder_language(path.resolve().parent))
    nbformat.write(notebook, path)
    if answered is not None and solution is not None:
        answered.cells = copy.deepcopy(notebook.cells[:start]) + ran[lesson_cells:]
        answered.metadata = copy.deepcopy(notebook.metadata)
        _count_from_one(answered)
        strip(answered, folder_language(solution.resolve().parent))
        nbformat.write(answered, solution)
    return time.monotonic() - started


def _first_exercise(notebook: nbformat.NotebookNode) -> int:
    tagged = (i for i, cell in enumerate(notebook.cells) if "exercise" in cell.metadata.get("tags", []))
    return next(tagged, len(notebook.cells))


def _count_from_one(notebook: nbformat.NotebookNode) -> None:
    """Execution counts as a run of this notebook alone numbers them: the solution's differ from the kernel's."""
    code = [cell for cell in notebook.cells if cell.cell_type == "code" and cell.source.strip()]
    for number, cell in enumerate(code, start=1):
        cell.execution_count = number
        for output in cell.outputs:
            if "execution_count" in output:
                output.execution_count = number


def _solution_of(path: Path) -> Path:
    """`notebooks/N.ipynb` -> `solutions/N.ipynb`, in the same edition (English, or `zh-CN/`)."""
    return path.parent.with_name("solutions") / path.name


def strip(notebook: nbformat.NotebookNode, language: str = "en") -> None:
    notebook.metadata.pop("widgets", None)
    spec = KernelSpecManager().get_kernel_spec(_KERNEL)
    notebook.metadata["kernelspec"] = {"display_name": spec.display_name, "language": spec.language, "name": _KERNEL}
    # language_info is kept as the kernel reported it (nbclient stores it): JupyterLab writes the same.
    widget_text = in_language(language, _WIDGET_TEXT)
    for index, cell in enumerate(notebook.cells):
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in _KEEP_CELL_METADATA}
        cell.id = f"cell-{index:03d}"
        if cell.cell_type == "code":
            cell.outputs = [_without_widget(output, widget_text) for output in _merge_streams(cell.outputs)]
    notebook.nbformat_minor = 5


def _without_widget(output: nbformat.NotebookNode, text: str) -> nbformat.NotebookNode:
    """A widget's view is dead without its state: keep a short line instead of its repr (`VBox(children=...`)."""
    data = output.get("data", {})
    if _WIDGET in data:
        data.pop(_WIDGET)
        if not str(data.get("text/plain", "")).startswith("["):
            data["text/plain"] = text
    return output


def _merge_streams(outputs: list) -> list:
    """One output per run of stdout (or stderr) text: how the kernel chunks a print varies run to run."""
    merged: list = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (
            output.output_type == "stream"
            and previous is not None
            and previous.output_type == "stream"
            and previous.name == output.name
        ):
            previous.text += output.text
        else:
            merged.append(output)
    return merged


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python tools/notebooks.py", description=__doc__.split("\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path, help="the .ipynb files to execute in place")
    paths = parser.parse_args(argv).notebooks
    if missing := [str(path) for path in paths if not path.is_file()]:
        parser.error(f"no such notebook: {', '.join(missing)}")
    paired = {path.resolve() for path in paths}
    for path in paths:
        solution = _solution_of(path) if path.parent.name == "notebooks" else None
        if solution is not None and solution.resolve() not in paired:
            solution = None
        if path.parent.name == "solutions" and (path.parent.with_name("notebooks") / path.name).resolve() in paired:
            continue  # run with its lesson
        seconds = execute(path, solution)
        for written in (path, solution) if solution is not None else (path,):
            print(f"{written}: executed in {seconds:.1f} s, {written.stat().st_size / 1024:.0f} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
