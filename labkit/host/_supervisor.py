"""Runs one MCP server as its child: it dies with the host, and leaves its exit status where the host can read it.

Started as a script (`python -I -S _supervisor.py STATUS_FILE [--warm SOCKET] -- COMMAND ARGS...`) so it
imports only the standard library and costs a few milliseconds. Stdin, stdout and stderr are passed straight
through. With `--warm`, a `python -m MODULE` command is forked by the host's warm Python (`_warm_python.py`)
instead of started cold; if that Python cannot be reached, the command is started as usual.
"""

import ctypes
import json
import os
import signal
import socket
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _die_with_parent(sig: int) -> None:
    # Linux only: the kernel sends `sig` when our parent exits, whatever killed it (kill -9 included).
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)
    except (OSError, AttributeError):
        pass


class _WarmChild:
    """A server forked by the warm Python: signalled by pid, its exit status read from our connection."""

    def __init__(self, connection: socket.socket, pid: int) -> None:
        self.connection, self.pid = connection, pid

    def send_signal(self, number: int) -> None:
        try:
            os.kill(self.pid, number)
        except ProcessLookupError:
            pass

    def wait(self) -> int:
        reply = self.connection.recv(4096)
        # No reply: the warm Python died, and its children with it (they die with their parent).
        return json.loads(reply)["returncode"] if reply else -signal.SIGKILL


def _forked(warm: str, command: list[str]) -> _WarmChild | None:
    """Ask the warm Python listening at `warm` (an abstract socket, "@name") to run `command` (`python -m MODULE ARGS`); None if it cannot."""
    if len(command) < 3 or command[0] != sys.executable or command[1] != "-m":
        return None
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        connection.connect("\0" + warm[1:])  # "@name": Linux's abstract socket namespace
        request = {"module": command[2], "args": command[3:], "env": dict(os.environ), "cwd": os.getcwd()}
        socket.send_fds(connection, [json.dumps(request).encode()], [0, 1, 2])
        reply = connection.recv(4096)
    except OSError:
        connection.close()
        return None
    if not reply:
        connection.close()
        return None
    return _WarmChild(connection, json.loads(reply)["pid"])


def main() -> int:
    status_file, *rest = sys.argv[1:]
    warm = None
    if rest[:1] == ["--warm"]:
        warm, rest = rest[1], rest[2:]
    separator, *command = rest
    assert separator == "--", "usage: _supervisor.py STATUS_FILE [--warm SOCKET] -- COMMAND ARGS..."
    parent = os.getppid()
    _die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # the host died before the line above took effect
        return 1
    try:
        child = (_forked(warm, command) if warm else None) or \
            subprocess.Popen(command, preexec_fn=lambda: _die_with_parent(signal.SIGKILL))
    except OSError as error:
        _write(status_file, {"started": False, "error": f"{type(error).__name__}: {error.strerror or error}"})
        print(f"cannot start {command[0]!r}: {error.strerror or error}", file=sys.stderr)
        return 127
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _frame: child.send_signal(number))
    code = child.wait()
    _write(status_file, {"started": True, "returncode": code})
    return code if code >= 0 else 128 - code


def _write(path: str, status: dict) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(status, handle)


if __name__ == "__main__":
    sys.exit(main())
