"""Figure 4: every notebook of the course executed headless (nbclient), each timed, in a temp copy."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from .environment import REPO_ROOT
from .memory import PeakRSS

__all__ = ["TARGET_S", "measure_course"]

TARGET_S = 60.0
_TIMEOUT_PER_CELL = 300


class _BudgetSpent(Exception):
    """Raised between two cells once the run's time budget is gone."""


def measure_course(folder: Path = REPO_ROOT / "notebooks", budget_s: float | None = None) -> dict[str, Any]:
    """Execute `folder/*.ipynb` in order, as CI does (scripted user), without rewriting the originals.

    With a `budget_s`, no cell starts after the budget is spent (the first notebook always runs),
    so the total is then a lower bound; the notebooks not run are named.
    """
    notebooks = sorted(folder.glob("*.ipynb"))
    if not notebooks:
        return {"skipped": f"no notebooks in {folder.relative_to(REPO_ROOT)}/*.ipynb", "notebooks": []}
    deadline = None if budget_s is None else time.monotonic() + budget_s
    rows: list[dict[str, Any]] = []
    previous = os.environ.get("LABKIT_SCRIPTED_USER")
    os.environ["LABKIT_SCRIPTED_USER"] = "1"  # forms are answered by the scripted user, as under CI
    try:
        with (
            tempfile.TemporaryDirectory(prefix="bench-course-") as scratch,
            tempfile.TemporaryFile(mode="w+") as kernel_log,
            PeakRSS() as memory,
        ):
            copy = Path(scratch) / folder.name
            shutil.copytree(folder, copy)
            for original in notebooks:
                if rows and deadline is not None and time.monotonic() >= deadline:
                    rows.append({"notebook": original.name, "ok": None, "status": "not run: time budget spent"})
                    continue
                rows.append(_execute(copy / original.name, kernel_log, None if not rows else deadline))
    finally:
        if previous is None:
            os.environ.pop("LABKIT_SCRIPTED_USER", None)
        else:
            os.environ["LABKIT_SCRIPTED_USER"] = previous
    complete = all(row.get("status") == "complete" for row in rows)
    total = round(sum(row.get("seconds", 0.0) for row in rows), 2)
    return {
        "notebooks": rows,
        "total_s": total,
        "complete": complete,  # False: total is a lower bound
        "target_s": TARGET_S,
        "meets_target": total <= TARGET_S and complete,
        "all_ok": all(row["ok"] is not False for row in rows),
        "budget_s": budget_s,
        "memory": memory.as_dict(),
    }


def _execute(path: Path, kernel_log: Any, deadline: float | None) -> dict[str, Any]:
    """Run one notebook in a fresh kernel; time it; name the failing cell, if any."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    failed: list[int] = []  # nbclient reports the failing cell through a hook

    def before_cell(cell: Any, cell_index: int) -> None:
        if deadline is not None and time.monotonic() >= deadline:
            raise _BudgetSpent(cell_index)

    client = NotebookClient(
        notebook,
        timeout=_TIMEOUT_PER_CELL,
        kernel_name="python3",
        record_timing=True,
        resources={"metadata": {"path": str(path.parent)}},
        # Stopped as nbval stops it after its last cell: a graceful shutdown hits a race in ipykernel 7.4 about one
        # time in five (its control thread waits on an IOPub flush after the main thread stopped the IOPub thread),
        # and jupyter_client waits 2.5 s before it sends SIGTERM; benchmarks/README.md has the measurement.
        shutdown_kernel="immediate",
        on_cell_execute=before_cell,
        on_cell_error=lambda cell, cell_index, execute_reply: failed.append(cell_index),
    )
    status, error = "complete", None
    started = time.monotonic()
    try:
        client.execute(stderr=kernel_log)  # the kernel's own chatter goes to a file, not the table
    except CellExecutionError as failure:
        status, error = "failed", f"cell {failed[0] if failed else '?'}: {failure.ename}: {failure.evalue}"[:300]
    except _BudgetSpent as spent:
        status = f"stopped before cell {spent.args[0]}: time budget spent"
    return {
        "notebook": path.name,
        "seconds": round(time.monotonic() - started, 2),
        "cells": sum(1 for cell in notebook.cells if cell.cell_type == "code"),
        "ok": error is None,
        "status": status,
        "error": error,
        "slowest_cells": _slowest_cells(notebook),
    }


def _slowest_cells(notebook: Any, keep: int = 3) -> list[dict[str, Any]]:
    """The cells that took longest, from nbclient's timing metadata: index, seconds, first line."""
    rows = []
    for index, cell in enumerate(notebook.cells):
        timing = cell.get("metadata", {}).get("execution", {})
        began, ended = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if began and ended:
            seconds = (_when(ended) - _when(began)).total_seconds()
            first_line = next((line for line in cell.source.splitlines() if line.strip()), "")
            rows.append({"cell": index, "seconds": round(seconds, 2), "source": first_line[:70]})
    return sorted(rows, key=lambda row: row["seconds"], reverse=True)[:keep]


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.rstrip("Z"))
