"""The host's warm Python: one per process, started with the first server it may fork, and what it may fork."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from collections.abc import Mapping
from typing import Any

from .._time_limits import scaled
from .._warm import SERVERS_FIRST, SERVERS_WHEN_IDLE, WARM_START_ENV, WarmPython, lent_to_us, servers_env, warm_starts
from ._busy_machine import Deadline
from ._spec import REPO_ROOT, ServerSpec

__all__ = ["WARM_START_ENV", "console_script", "fork_request", "warm_python_pid", "warm_socket"]

# Until it has imported the SDK: its own start-up must never count against a server's start limit (a loaded machine
# took longer than the limit to import it).
_READY_TIMEOUT_S = 60.0
_LOOK_S = 0.5
_SET_AFTER_FORK = ("PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")
"""The only Python variables a forked server may set: the first is applied after the fork, the second is moot there
(the warm Python writes unbuffered, and the SDK flushes each message anyway)."""


def fork_request(
    spec: ServerSpec, command: list[str], env: Mapping[str, str], cwd: str | None
) -> dict[str, Any] | None:
    """Whether the server `spec` runs as `command` may be forked by the warm Python, and what to ask it: the one place
    that decides. A sandboxed server never is; a lab server is when it imports the lab from the lab's own folder; any
    other, when it sets nothing changing how Python starts. What is forked: `python -m MODULE`, `python SCRIPT.py`
    (a file that is there) or a console script of this Python's; anything else starts cold."""
    if spec.sandbox:
        return None
    if spec.lab_server:
        if env.get("PYTHONPATH") != str(REPO_ROOT):
            return None
    elif any(name.startswith("PYTHON") and name not in _SET_AFTER_FORK for name in env):
        return None
    if command[0] != sys.executable:
        found = console_script(command[0], env.get("PATH"))
        return {"script": found, "args": command[1:]} if found else None
    if len(command) > 2 and command[1] == "-m":
        return {"module": command[2], "args": command[3:]}
    if len(command) > 1 and command[1].endswith(".py") and os.path.isfile(os.path.join(cwd or ".", command[1])):
        return {"script": command[1], "args": command[2:]}
    return None


def console_script(program: str, path: str | None = None) -> str | None:
    """Where `program` is, found on `path` as exec would find it, if it is an executable script whose first line runs
    this Python and nothing else (a console script installed beside it: `mcp-server-time`); else None."""
    found = shutil.which(program, path=path)
    if found is None or not os.access(found, os.X_OK):
        return None
    try:
        with open(found, "rb") as script:
            first = script.readline(len(sys.executable) + 4)
    except OSError:
        return None
    return found if first.rstrip(b"\r\n") == b"#!" + os.fsencode(sys.executable) else None


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
