"""How a notebook shows the lab's errors: a `LabError` by its message (in exception groups too), an interrupt as one
line naming what it ended, and an interrupt that ends an awaiting cell at once."""

from __future__ import annotations

import asyncio
import sys
import traceback
from typing import Any

from ._i18n import _
from .errors import LabError

__all__ = ["interrupted", "show_errors_plainly"]

_HOOKED: set[int] = set()
_LINES: dict[int, str] = {}
"""What an interrupt of the cell with that execution count ended, in one line (the first thing it ended)."""
_LOOK_S = 0.2
"""How often the kernel's event loop wakes while a cell awaits: the longest an interrupt waits to land."""
_WHOLE = "Verbose"
"""IPython's exception mode (`%xmode`) in which a `LabError` is shown with its whole traceback."""


def show_errors_plainly() -> Any:
    """IPython's shell, told to show a `LabError` as its message and an interrupt as one line (notebook 02); None
    outside IPython.

    A `LabError`'s message is the whole story the learner can act on (the server, the cause, its stderr); the frames
    of the host's task groups and the SDK's exception groups under it are the lab's, not the learner's (IPython
    printed about a hundred lines of them for a server that failed to start). So are the exception groups a task group
    wraps it in (anyio's: one per group): each `LabError` in them is shown the same way, with how to see the whole
    traceback (`%xmode Verbose`). An interrupt that ended a call or a form says which (`interrupted`) instead of an
    empty `CancelledError`. Any other exception group is shown as Python shows it: IPython left it on stderr, or
    never ended the cell (a top-level `async with` task group).
    """
    if "IPython" not in sys.modules:  # not in a kernel (which has it imported): nothing to tell, nothing to import
        return None
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or id(shell) in _HOOKED:
        return shell
    _HOOKED.add(id(shell))
    shell.set_custom_exc((asyncio.CancelledError, KeyboardInterrupt, LabError, BaseExceptionGroup), _shown)
    _interrupts_land()
    return shell


def _interrupts_land() -> None:
    """Wake the kernel's event loop every `_LOOK_S` while it runs.

    ipykernel 7 turns an interrupt into cancelling the awaiting cell from its shell thread, without waking the loop
    the cell runs on: the cancel lands only when something else wakes that loop. A cell awaiting a server that never
    answers (the SDK's own `Client` has no limit) had nothing else, and two interrupts left it running; a wake-up
    every `_LOOK_S` lands the cancel within that.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # IPython without a running loop (a terminal): its Ctrl-C is a KeyboardInterrupt
        return

    def look_again() -> None:
        if not loop.is_closed():
            loop.call_later(_LOOK_S, look_again)

    look_again()


def interrupted(line: str) -> None:
    """Say, if the running cell ends by an interrupt, what the interrupt ended (a call, a form: notebooks 04, 05)."""
    shell = show_errors_plainly()
    if shell is not None:
        _LINES.setdefault(shell.execution_count, line)


def _shown(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> list[str]:
    line = _LINES.pop(shell.execution_count, None)
    errors = _lab_errors(value)
    if errors and shell.InteractiveTB.mode != _WHOLE:
        hint = _("(The whole traceback: run %xmode {mode}, then this cell again.)").format(mode=_WHOLE)
        stb = [*(f"\x1b[0;31m{type(error).__name__}\x1b[0m: {error}" for error in errors), f"\x1b[2m{hint}\x1b[0m"]
    elif line is not None and not errors:
        stb = [f"\x1b[0;31m■ {line}\x1b[0m"]
    elif errors or isinstance(value, BaseExceptionGroup):
        # Python's own account: IPython's could not draw the exception groups in it (or chained to it).
        stb = [part.rstrip("\n") for part in traceback.format_exception(value)]
    else:
        stb = shell.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        shell._showtraceback(etype, value, stb)
        return stb
    # IPython also stores each error's traceback, formatted again after this is shown: for a run's cancellation that
    # took seconds, the cell still [*] while the learner read the line and pressed Run All, whose cells ipykernel then
    # aborted (stop_on_error aborts what is queued when a cell fails). Stored as shown, the cell ends as it appears.
    value._render_traceback_ = lambda: stb  # type: ignore[attr-defined]
    value.__context__, value.__cause__ = None, None
    shell._showtraceback(etype, value, stb)
    return stb


def _lab_errors(error: BaseException) -> list[BaseException]:
    """`error` if it is a `LabError`; the errors an exception group holds, at any depth, when all are; else none."""
    if isinstance(error, LabError):
        return [error]
    if isinstance(error, BaseExceptionGroup):
        held = [_lab_errors(inner) for inner in error.exceptions]
        return [found for errors in held for found in errors] if all(held) else []
    return []
