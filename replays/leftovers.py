"""Which processes a test (or a replayed fault case) left running: its descendants, and any carrying its mark."""

from __future__ import annotations

import os

from labkit import _warm_kernels
from labkit.processes._warm import warm_python_pid

__all__ = ["SESSION_MARK", "our_processes"]

SESSION_MARK = "LABKIT_TEST_SESSION"
"""Every process started with the caller's environment inherits it, so one re-parented away is still found."""
_ENDED = (b"Z", b"X")


def our_processes() -> dict[int, str]:
    """Living processes started from here: descendants of this process, or carrying its `SESSION_MARK`.

    This process's warm Pythons (the host's, and Jupyter's for the kernels it starts) are not among them: they serve
    every test, and go when this process does. One pass over Linux's /proc, two small reads per process: the tests
    call it twice per test, and psutil's three reads and objects per process made it a second of CPU per hundred
    tests.
    """
    mark = f"\0{SESSION_MARK}={os.environ[SESSION_MARK]}\0".encode()
    me = os.getpid()
    warm = {warm_python_pid(), *_warm_kernels.warm_python_pids()}
    children: dict[int, list[int]] = {}
    found: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit() or (pid := int(name)) == me:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                state, parent = stat.read().rsplit(b")", 1)[1].split()[:2]
            if state in _ENDED:
                continue
            children.setdefault(int(parent), []).append(pid)
            with open(f"/proc/{name}/environ", "rb") as environ:
                if mark in b"\0" + environ.read():
                    found.add(pid)
        except (OSError, ValueError):  # ended meanwhile, or another user's
            continue
    below = list(children.get(me, []))
    while below:
        pid = below.pop()
        found.add(pid)
        below.extend(children.get(pid, []))
    alive = {}
    for pid in sorted(found - warm):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                words = cmdline.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        alive[pid] = " ".join(words[:-1][-4:] if words[-1] == "" else words[-4:])
    return alive
