"""The host's warm Python: one per process, started with the first server it can fork, forking every later one."""

from __future__ import annotations

import os
import secrets
import select
import socket
import subprocess
import sys
import threading
from pathlib import Path

__all__ = ["WARM_START_ENV", "warm_python_pid", "warm_socket"]

WARM_START_ENV = "LABKIT_WARM_START"
"""Set to 0 to start every server cold: a lab server as `python -m servers.<name>` (benchmarks compare both)."""
_SCRIPT = str(Path(__file__).with_name("_warm_python.py"))
_TITLE_ROOM = " " * 512  # room for each forked server's command line (`_warm_python.retitle`)
_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "PYTHONDONTWRITEBYTECODE")
_READY_TIMEOUT_S = 60.0


class _WarmPython:
    def __init__(self, pythonpath: str) -> None:
        self.owner, self.pythonpath = os.getpid(), pythonpath
        # Linux's abstract namespace ("@" for the leading NUL, as `ss` writes it): no file to clean up, no
        # path-length limit, and a sandbox (its own network namespace) cannot reach it; the warm Python
        # serves only processes of its own user.
        self.socket = f"@labkit-warm-{os.getpid()}-{secrets.token_hex(8)}"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            listener.bind("\0" + self.socket[1:])
            listener.listen(64)
            env = {k: os.environ[k] for k in _ENV if k in os.environ}
            env.update(PYTHONPATH=pythonpath, PYTHONUNBUFFERED="1")
            # Its stdin is a pipe from us: it stops, with its servers, when that pipe closes (we exited or died).
            self.process = subprocess.Popen(
                [sys.executable, _SCRIPT, str(listener.fileno()), _TITLE_ROOM], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=pythonpath,
                pass_fds=(listener.fileno(),),
            )
        finally:
            listener.close()
        self._await_ready()
        # Reaped the moment it ends: a kernel shutting down signals its children and waits while any is left, and
        # an unreaped (zombie) child is still one; jupyter_client then waited 2.5 s and sent the kernel SIGTERM.
        threading.Thread(target=self.process.wait, name="labkit-warm-python-reaper", daemon=True).start()

    def _await_ready(self) -> None:
        """Wait until it has imported the SDK, so that its own start-up never counts against a server's first answer
        (the SDK gives `server/discover` 10 s, then falls back to the old handshake: a loaded machine took longer)."""
        from ._warm_python import READY  # its own word, defined where it is written (only standard modules load)

        assert self.process.stdout is not None
        with self.process.stdout as said:
            ready, _, _ = select.select([said], [], [], _READY_TIMEOUT_S)
            if not ready or os.read(said.fileno(), len(READY)) != READY:
                self.process.kill()
                self.process.wait()
                raise OSError(f"the warm Python was not ready within {_READY_TIMEOUT_S:.0f} s")

    def serves(self, pythonpath: str) -> bool:
        return self.owner == os.getpid() and self.pythonpath == pythonpath and self.process.poll() is None


_current: _WarmPython | None = None
_starting = threading.Lock()


def warm_socket(pythonpath: str) -> str | None:
    """Where this process's warm Python listens (started now if needed); None when servers start cold.

    One warm Python serves one `PYTHONPATH` (the lab's folder): it imported from there once.
    """
    global _current
    if os.environ.get(WARM_START_ENV, "1") == "0" or not sys.platform.startswith("linux"):
        return None
    with _starting:
        if _current is None or not _current.serves(pythonpath):
            try:
                _current = _WarmPython(pythonpath)
            except OSError:  # no abstract sockets or SOCK_SEQPACKET here, or it did not start: start cold, as before
                _current = None
                return None
        return _current.socket


def warm_python_pid() -> int | None:
    """The pid of this process's warm Python while it runs: it outlives each Host, by design, until we exit."""
    return _current.process.pid if _current is not None and _current.serves(_current.pythonpath) else None
