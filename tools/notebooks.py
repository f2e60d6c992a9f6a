"""Execute the lab's notebooks in place, deterministically, and strip what varies from run to run.

    python tools/notebooks.py notebooks/00_start_here.ipynb [more.ipynb ...]

Cells run in the notebook's folder with the scripted user answering forms (as under CI). Stored:
outputs and execution counts, as nbformat 4.5 with cell ids derived from the cell's position, and the
kernelspec and language_info as JupyterLab writes them when it connects the kernel (so it opens and
saves the notebook without a change). Dropped: execution timing metadata and widget
state and views (a widget is stored as its one-line text), so that a re-run of an unchanged
notebook changes no bytes.
"""

from __future__ import annotations

import argparse
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


def execute(path: Path) -> float:
    notebook = nbformat.read(path, as_version=4)
    os.environ["LABKIT_SCRIPTED_USER"] = "1"
    started = time.monotonic()
    NotebookClient(
        notebook,
        timeout=round(scaled(600)),
        kernel_name=_KERNEL,
        record_timing=False,
        resources={"metadata": {"path": str(path.parent)}},
    ).execute()
    strip(notebook, folder_language(path.resolve().parent))
    nbformat.write(notebook, path)
    return time.monotonic() - started


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
    for path in paths:
        seconds = execute(path)
        print(f"{path}: executed in {seconds:.1f} s, {path.stat().st_size / 1024:.0f} kB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
