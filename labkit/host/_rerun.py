"""A waiting form gives way when its cell is run again (Run All twice): the stale run is skipped, the new asks."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from labkit._i18n import _, ngettext

__all__ = ["Waited", "replaces_declined_form", "wait_for_click"]

_POLL_S = 0.3


class Waited(Enum):
    """How a wait for a click ended."""

    ANSWERED = "answered"
    TIMED_OUT = "timed out"
    RUN_AGAIN = "run again"


@dataclass
class _Runs:
    superseded: set[str] = field(default_factory=set)
    """Executions whose cell was queued again: the output they draw into is gone, so their forms give way at once."""
    skipping: str = ""
    skipped: int = 0
    note_due: bool = False
    again: str = ""
    """The cell run again: its new run says what happened, beside its new form."""
    form_due: bool = False
    """The next form shown replaces the declined one: it says so, where the learner is looking."""


_RUNS = _Runs()
_HOOKED: set[int] = set()


async def wait_for_click(answer: asyncio.Future[Any], timeout: float) -> Waited:
    """Wait for a widget's click; give way at once if the learner runs the form's cell again (notebook 03).

    JupyterLab clears a cell's output when the cell is queued again, form included, without telling
    the kernel; but ipykernel has already received the new execute request. Every `_POLL_S` this reads
    the requests waiting for the kernel: if one is for the form's own cell, the form is declined; then
    each cell of the earlier run that is queued again behind itself is skipped (nobody sees its
    output), and the form's cell, as it runs again, says what happened.
    """
    kernel = _kernel()
    if kernel is None:
        try:
            await asyncio.wait_for(asyncio.shield(answer), timeout)
        except TimeoutError:
            return Waited.TIMED_OUT
        return Waited.ANSWERED
    _hook(kernel)
    mine, cell = _current(kernel)
    if mine in _RUNS.superseded:
        return Waited.RUN_AGAIN
    deadline = asyncio.get_running_loop().time() + timeout
    while not answer.done():
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            return Waited.TIMED_OUT
        await asyncio.wait({answer}, timeout=min(_POLL_S, left))
        if not answer.done() and cell and _run_again(kernel, mine, cell):
            return Waited.RUN_AGAIN
    return Waited.ANSWERED


def _run_again(kernel: Any, mine: str, cell: str) -> bool:
    if cell not in _queued_cells(kernel):
        return False
    _RUNS.superseded.add(mine)
    _RUNS.note_due = _RUNS.form_due = True
    _RUNS.again = cell
    return True


def replaces_declined_form() -> bool:
    """True once, for the first form after a run again: it takes the place of the declined form (notebook 03)."""
    due, _RUNS.form_due = _RUNS.form_due, False
    return due


def _kernel() -> Any | None:
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return getattr(shell, "kernel", None)


def _current(kernel: Any) -> tuple[str, str | None]:
    parent = kernel.get_parent("shell") or {}
    return parent.get("header", {}).get("msg_id", ""), (parent.get("metadata") or {}).get("cellId")


def _queued_cells(kernel: Any) -> set[str]:
    """The cell ids of the execute requests waiting for the kernel, read from ipykernel's waiting handlers."""
    running = _current(kernel)[0]
    found = set()
    for task in asyncio.all_tasks():
        message = _waiting_message(task)
        if message is None:
            continue
        try:
            _, frames = kernel.session.feed_identities(message, copy=False)
            header, metadata = (kernel.session.unpack(getattr(f, "bytes", f)) for f in (frames[1], frames[3]))
        except Exception:  # noqa: BLE001 - a message ipykernel itself will reject when its turn comes
            continue
        cell = (metadata or {}).get("cellId")
        if header.get("msg_type") == "execute_request" and header.get("msg_id") != running and cell:
            found.add(cell)
    return found


def _waiting_message(task: asyncio.Task[Any]) -> Any | None:
    """The raw message of an ipykernel 7 `shell_main` handler in `task`'s await chain (it waits for the cell lock)."""
    coroutine: Any = task.get_coro()
    while coroutine is not None:
        frame = getattr(coroutine, "cr_frame", None)
        if frame is not None and frame.f_code.co_name == "shell_main":
            return frame.f_locals.get("msg")
        coroutine = getattr(coroutine, "cr_await", None)
    return None


def _hook(kernel: Any) -> None:
    shell = kernel.shell
    if id(shell) in _HOOKED:
        return
    _HOOKED.add(id(shell))

    def skip_stale(lines: list[str]) -> list[str]:
        # Only after a run again: a cell queued twice otherwise runs twice, as in any kernel.
        mine, cell = _current(kernel)
        if not _RUNS.note_due or not cell or cell not in _queued_cells(kernel):
            return lines
        # IPython may transform a cell more than once; it is one skipped cell.
        _RUNS.skipped += mine != _RUNS.skipping
        _RUNS.skipping = mine
        return []

    def say_new_run(_info: Any) -> None:
        # Said by the form's cell as it runs again: before it, a cell of the earlier run that was not queued again
        # still runs (Run Selected Cell queues the form's cell alone), and the note is not about that cell.
        mine, cell = _current(kernel)
        if not _RUNS.note_due or cell != _RUNS.again or mine == _RUNS.skipping or mine in _RUNS.superseded:
            return
        note = (
            _(
                "↻ You ran this form's cell again while the form was waiting: that form was declined. This run asks "
                "afresh."
            )
            if not _RUNS.skipped
            else ngettext(
                "↻ You ran the cells again while a form was waiting: that form was declined, and {count} cell of the "
                "earlier run was skipped (its output had been cleared). This run starts afresh.",
                "↻ You ran the cells again while a form was waiting: that form was declined, and {count} cells of the "
                "earlier run were skipped (their outputs had been cleared). This run starts afresh.",
                _RUNS.skipped,
            ).format(count=_RUNS.skipped)
        )
        print(note, flush=True)  # noqa: T201 - said in the new run's output, where the learner looks
        _RUNS.note_due, _RUNS.skipped = False, 0

    shell.input_transformers_cleanup.insert(0, skip_stale)
    shell.events.register("pre_run_cell", say_new_run)
