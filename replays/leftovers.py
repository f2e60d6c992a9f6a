"""Which processes a test (or a replayed fault case) left running: its descendants, and any carrying its mark."""

from __future__ import annotations

import os

import psutil  # a dependency of ipykernel, which the lab pins

from labkit import _warm_kernels
from labkit.processes._warm import warm_python_pid

__all__ = ["SESSION_MARK", "our_processes"]

SESSION_MARK = "LABKIT_TEST_SESSION"
"""Every process started with the caller's environment inherits it, so one re-parented away is still found."""


def our_processes() -> dict[int, str]:
    """Living processes started from here: descendants of this process, or carrying its `SESSION_MARK`.

    This process's warm Pythons (the host's, and Jupyter's for the kernels it starts) are not among them: they serve
    every test, and go when this process does.
    """
    mark, me = os.environ[SESSION_MARK], psutil.Process()
    warm = {warm_python_pid(), *_warm_kernels.warm_python_pids()}
    found = {child.pid: child for child in me.children(recursive=True) if child.pid not in warm}
    for process in psutil.process_iter():
        try:
            if process.pid != me.pid and process.pid not in warm and process.environ().get(SESSION_MARK) == mark:
                found[process.pid] = process
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    alive = {}
    for pid, process in found.items():
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                alive[pid] = " ".join(process.cmdline()[-4:])
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            continue
    return alive
