"""How a notebook shows the lab's errors: a `LabError` by its message, an interrupt as one line naming what it ended."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from .errors import LabError

__all__ = ["interrupted", "show_errors_plainly"]

_HOOKED: set[int] = set()
_LINES: dict[int, str] = {}
"""What an interrupt of the cell with that execution count ended, in one line (the first thing it ended)."""


def show_errors_plainly() -> Any:
    """IPython's shell, told to show a `LabError` as its message and an interrupt as one line (notebook 02); None
    outside IPython.

    A `LabError`'s message is the whole story the learner can act on (the server, the cause, its stderr); the frames
    of the host's task groups and the SDK's exception groups under it are the lab's, not the learner's (IPython
    printed about a hundred lines of them for a server that failed to start). An interrupt that ended a call or a
    form says which (`interrupted`) instead of an empty `CancelledError`.
    """
    if "IPython" not in sys.modules:  # not in a kernel (which has it imported): nothing to tell, nothing to import
        return None
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or id(shell) in _HOOKED:
        return shell
    _HOOKED.add(id(shell))
    shell.set_custom_exc((asyncio.CancelledError, KeyboardInterrupt, LabError), _shown)
    return shell


def interrupted(line: str) -> None:
    """Say, if the running cell ends by an interrupt, what the interrupt ended (a call, a form: notebooks 04, 05)."""
    shell = show_errors_plainly()
    if shell is not None:
        _LINES.setdefault(shell.execution_count, line)


def _shown(shell: Any, etype: type, value: BaseException, tb: Any, tb_offset: Any = None) -> list[str]:
    line = _LINES.pop(shell.execution_count, None)
    if isinstance(value, LabError):
        stb = [f"\x1b[0;31m{type(value).__name__}\x1b[0m: {value}"]
    elif line is not None:
        stb = [f"\x1b[0;31m■ {line}\x1b[0m"]
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
