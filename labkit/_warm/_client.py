"""Asking a warm Python to fork a process for us: the requester's side of `_warm_python.py`.

Standard library only, and loaded by path by the host's supervisor too (`labkit/processes/_supervisor.py`), which is
started for every server and must start in milliseconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import subprocess
from collections.abc import Mapping, Sequence

__all__ = ["LENT_ENV", "Forked", "Lent", "fork", "lent_to_us"]

LENT_ENV = "LABKIT_WARM_PYTHON"
"""In a kernel Jupyter's warm Python forked: "ADDRESS PID PARENT", a warm Python for servers lent to it (its socket and
pid) by the process that started both, and the pid of the warm Python that forked the kernel."""


_ADOPTED_EXIT = 1
"""The exit status given for a child that ended after its warm Python: its status went to the keeper that adopted it."""


class Forked:
    """A process a warm Python forked for us, used as a `subprocess.Popen` is: signalled by its pid, its exit status
    read from our connection to that warm Python (it is that Python's child, not ours)."""

    stdin = stdout = stderr = None

    def __init__(self, connection: socket.socket, pid: int) -> None:
        self.connection, self.pid = connection, pid
        self.returncode: int | None = None
        # Watched by a pidfd too: if the warm Python dies first, a kernel lives on below its keeper (`_keeper.py`).
        try:
            self._pidfd: int | None = os.pidfd_open(pid)
        except OSError:
            self._pidfd = None
        self._adopted = False

    def poll(self) -> int | None:
        return self._status(block=False)

    def wait(self, timeout: float | None = None) -> int:
        watched = self._pidfd if self._adopted and self._pidfd is not None else self.connection
        if self.returncode is None and not select.select([watched], [], [], timeout)[0]:
            raise subprocess.TimeoutExpired([str(self.pid)], timeout or 0)
        return self._status(block=True)  # type: ignore[return-value]

    def send_signal(self, number: int) -> None:
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def _status(self, block: bool) -> int | None:
        if self.returncode is None and self._adopted and self._pidfd is not None:  # adopted: watched by its pidfd
            if select.select([self._pidfd], [], [], None if block else 0)[0]:
                self.returncode = _ADOPTED_EXIT
        elif self.returncode is None:
            try:
                reply = self.connection.recv(4096, 0 if block else socket.MSG_DONTWAIT)
            except BlockingIOError:
                return None
            self.connection.close()
            if reply:
                self.returncode = json.loads(reply)["returncode"]
            elif self._pidfd is not None and not select.select([self._pidfd], [], [], 0)[0]:
                self._adopted = True  # the warm Python died; this child lives on, adopted by its keeper
                return self._status(block)
            else:  # no reply: the warm Python died, and this child with it (a server dies with its parent)
                self.returncode = -signal.SIGKILL
        if self.returncode is not None and self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
        return self.returncode


def fork(warm: str, request: Mapping[str, object], fds: Sequence[int]) -> Forked | None:
    """Ask the warm Python listening at `warm` ("@name": an abstract socket) to fork the process `request` names
    (`_warm_python.py` says how), with `fds` as its descriptors 0, 1 and 2; None if it cannot be reached."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        connection.connect("\0" + warm[1:])
        socket.send_fds(connection, [json.dumps(request).encode()], list(fds))
        reply = connection.recv(4096)
    except OSError:
        reply = b""
    if not reply:
        connection.close()
        return None
    return Forked(connection, json.loads(reply)["pid"])


class Lent:
    """A warm Python for servers lent to this process: its socket's address and its pid. (No `typing` here: the
    supervisor, which loads this module, is started for every server.)"""

    def __init__(self, address: str, pid: int) -> None:
        self.address, self.pid = address, pid


def lent_to_us() -> Lent | None:
    """The warm Python for servers lent to this very process, if it is a kernel Jupyter's warm Python forked.

    A child of ours inherits the variable, not the parent: it starts a warm Python of its own, as in a cold kernel.
    """
    address, pid, parent = ([*os.environ.get(LENT_ENV, "").split(), "", "", ""])[:3]
    return Lent(address, int(pid)) if address and pid.isdigit() and parent == str(os.getppid()) else None
