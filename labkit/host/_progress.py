"""A one-line progress display for a long wait, replaced by a one-line summary when the wait ends."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from labkit._i18n import _

from ._user import scripted_user_active

__all__ = ["Progress", "progress"]


@dataclass
class Progress:
    """What the line will say when the wait ends; `done(...)` sets it."""

    summary: str

    def done(self, summary: str) -> None:
        self.summary = summary


@contextmanager
def progress(doing: str) -> Iterator[Progress]:
    """`with progress("starting the servers…") as p: ...; p.done("2 servers up")` (notebook 07).

    In JupyterLab the line says `◷ doing` while the block runs and becomes `✓ summary` (or
    `✗ doing: the error`, or `■ doing: stopped` after an interrupt) when it ends. Under nbval and
    CI (a scripted user) only the final line is printed, so outputs stay the same from run to run;
    outside a notebook nothing is shown.
    """
    step = Progress(doing)
    kernel = "ipykernel" in sys.modules and _in_kernel()
    handle = None
    if kernel and not scripted_user_active():
        from IPython.display import display

        handle = display(_Line(f"◷ {doing}"), display_id=True)
    try:
        yield step
    except (asyncio.CancelledError, KeyboardInterrupt):
        # the learner stopped it (Interrupt, or a form's run given up): no error to name
        _show(kernel, handle, _("■ {doing}: stopped").format(doing=doing))
        raise
    except BaseException as error:
        _show(kernel, handle, f"✗ {doing}: {type(error).__name__}")
        raise
    _show(kernel, handle, f"✓ {step.summary}")


class _Line:
    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, **kwargs: object) -> dict[str, str]:
        return {"text/plain": self.text}


def _in_kernel() -> bool:
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config


def _show(kernel: bool, handle: Any, line: str) -> None:
    if handle is not None:
        handle.update(_Line(line))
    elif kernel:
        print(line)  # noqa: T201 - a progress line in the notebook's output
