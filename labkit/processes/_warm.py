"""The host's warm Python: one per process, started with the first server it can fork, forking every later one."""

from __future__ import annotations

import os
import threading

from .._time_limits import scaled
from .._warm import SERVERS_FIRST, SERVERS_WHEN_IDLE, WARM_START_ENV, WarmPython, lent_to_us, servers_env, warm_starts
from ._busy_machine import Deadline

__all__ = ["WARM_START_ENV", "warm_python_pid", "warm_socket"]

# Until it has imported the SDK: its own start-up must never count against a server's start limit (a loaded machine
# took longer than the limit to import it).
_READY_TIMEOUT_S = 60.0
_LOOK_S = 0.5


class _HostsWarmPython:
    def __init__(self, pythonpath: str) -> None:
        self.owner, self.pythonpath = os.getpid(), pythonpath
        self.python = WarmPython(
            SERVERS_FIRST, SERVERS_WHEN_IDLE, env={**servers_env(os.environ), "PYTHONPATH": pythonpath}, cwd=pythonpath
        )
        # Given longer while it waits for a CPU: stopped for a busy machine, its start-up would be lost, and its
        # waiting with it (a server's start-up limit is moved on by what its processes waited, alive ones only).
        deadline = Deadline(scaled(_READY_TIMEOUT_S))
        while not self.python.ready(_LOOK_S):
            if deadline.passed() or self.python.process.poll() is not None:
                self.python.stop()
                raise OSError(f"the warm Python was not ready within {deadline.limit:.0f} s")
        # Reaped the moment it ends: a kernel shutting down signals its children and waits while any is left, and
        # an unreaped (zombie) child is still one; jupyter_client then waited 2.5 s and sent the kernel SIGTERM.
        threading.Thread(target=self.python.process.wait, name="labkit-warm-python-reaper", daemon=True).start()

    def serves(self, pythonpath: str) -> bool:
        return self.owner == os.getpid() and self.pythonpath == pythonpath and self.python.process.poll() is None


_current: _HostsWarmPython | None = None
_starting = threading.Lock()


def warm_socket(pythonpath: str) -> str | None:
    """Where this process's warm Python listens (started now if needed); None when servers start cold.

    One warm Python serves one `PYTHONPATH` (the lab's folder): it imported from there once. In a kernel forked
    by Jupyter's warm Python, the warm Python for servers lent to it serves every folder (`labkit/_warm_kernels.py`).
    """
    global _current
    if not warm_starts():
        return None
    if (lent := lent_to_us()) is not None:
        return lent.address
    with _starting:
        if _current is None or not _current.serves(pythonpath):
            try:
                _current = _HostsWarmPython(pythonpath)
            except OSError:  # no abstract sockets or SOCK_SEQPACKET here, or it did not start: start cold, as before
                _current = None
                return None
        return _current.python.socket


def warm_python_pid() -> int | None:
    """The pid of this process's warm Python while it runs: it outlives each Host, by design, until we exit."""
    if (lent := lent_to_us()) is not None:
        return lent.pid
    return _current.python.pid if _current is not None and _current.serves(_current.pythonpath) else None
