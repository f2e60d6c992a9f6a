"""Starting a warm Python of ours, and what one for the lab's servers imports and starts with."""

from __future__ import annotations

import os
import secrets
import select
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ._keeper import children_of as keeper_children
from ._warm_python import READY, WHEN_IDLE

__all__ = ["SERVERS_FIRST", "SERVERS_WHEN_IDLE", "WARM_START_ENV", "WarmPython", "servers_env", "warm_starts"]

WARM_START_ENV = "LABKIT_WARM_START"
"""Set to 0 to start every process cold: the lab's servers as `python -m servers.<name>`, Jupyter's kernels as
jupyter_client starts them (the benchmarks compare both)."""
SERVERS_FIRST = ("anyio", "pydantic", "sqlite3", "mcp", "mcp.server.mcpserver", "mcp.server.stdio")
"""What a lab server imports before its first answer: a warm Python for servers imports it before it is ready."""
SERVERS_WHEN_IDLE = ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg")
"""The charts server's first chart: imported one module at a time whenever no start is waiting."""
_SERVERS_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "PYTHONDONTWRITEBYTECODE")
_SCRIPT = str(Path(__file__).with_name("_warm_python.py"))
_KEEPER = str(Path(__file__).with_name("_keeper.py"))
_TITLE_ROOM = " " * 512  # room for each forked child's command line (`_warm_python.retitle`)


def warm_starts() -> bool:
    """Whether processes may be forked by a warm Python here: not turned off, and on Linux (abstract sockets, prctl)."""
    return os.environ.get(WARM_START_ENV, "1") != "0" and sys.platform.startswith("linux")


def servers_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment a warm Python for servers imports in: a few of `environ`'s variables, output unbuffered.

    Each server it forks gets its own environment; what its imports read when imported came from this one.
    """
    return {**{name: environ[name] for name in _SERVERS_ENV if name in environ}, "PYTHONUNBUFFERED": "1"}


class WarmPython:
    """A warm Python of ours: `modules` imported before it is ready, `when_idle` after, in `env` and `cwd`.

    It stops, with its children, when we close its stdin (or exit); `ready` says when it has imported `modules`.
    """

    def __init__(
        self,
        modules: Sequence[str],
        when_idle: Sequence[str] = (),
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        kept: bool = False,
    ) -> None:
        """`kept`: run it below a keeper (`_keeper.py`), which adopts its children if it dies: for kernels."""
        # Linux's abstract namespace ("@" for the leading NUL, as `ss` writes it): no file to clean up, no
        # path-length limit, and a sandbox (its own network namespace) cannot reach it; a warm Python serves
        # only processes of its own user.
        self.socket = f"@labkit-warm-{os.getpid()}-{secrets.token_hex(8)}"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            listener.bind("\0" + self.socket[1:])
            listener.listen(64)
            # Its stdin is a pipe from us: it stops, with its children, when that pipe closes (we exited or died).
            self.process = subprocess.Popen(
                [
                    *((sys.executable, _KEEPER) if kept else ()),
                    sys.executable,
                    _SCRIPT,
                    str(listener.fileno()),
                    _TITLE_ROOM,
                    *modules,
                    *((WHEN_IDLE, *when_idle) if when_idle else ()),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=dict(env),
                cwd=cwd,
                pass_fds=(listener.fileno(),),
            )
        finally:
            listener.close()
        self._ready = False
        self._kept = kept
        self._pid: int | None = None if kept else self.process.pid

    @property
    def pid(self) -> int:
        """The warm Python's pid (below its keeper, if kept: the keeper's first child)."""
        if self._pid is None:
            below = keeper_children(self.process.pid)
            if not below:
                return self.process.pid  # not started yet, or ended
            self._pid = below[0]
        return self._pid

    @property
    def pids(self) -> set[int]:
        """Its pid and its keeper's: processes of ours that are not a child it forked."""
        return {self.process.pid, self.pid}

    def running(self) -> bool:
        """Whether the warm Python itself still runs (its keeper may outlive it, keeping its children)."""
        if self.process.poll() is not None:
            return False
        if not self._kept:
            return True
        try:
            with open(f"/proc/{self.pid}/stat", encoding="ascii") as stat:
                return self.pid != self.process.pid and stat.read().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    @property
    def said_ready(self) -> bool:
        """Whether `ready` has seen it say so (it may have ended since)."""
        return self._ready

    def ready(self, timeout: float) -> bool:
        """Whether it has said it is ready, waiting at most `timeout` seconds for that (0: not at all)."""
        if not self._ready and self.process.poll() is None and self.process.stdout is not None:
            said, _, _ = select.select([self.process.stdout], [], [], timeout)
            self._ready = bool(said) and os.read(self.process.stdout.fileno(), len(READY)) == READY
        return self._ready and self.running()

    def stop(self) -> None:
        """Stop it now, with its children."""
        self.process.kill()
        self.process.wait()
