"""Runs one MCP server as its child: it dies with the host, and leaves its exit status where the host can read it.

Started as a script (`python -I -S _supervisor.py STATUS_FILE -- COMMAND ARGS...`) so it imports only the
standard library and costs a few milliseconds. Stdin, stdout and stderr are passed straight through.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _die_with_parent(sig: int) -> None:
    # Linux only: the kernel sends `sig` when our parent exits, whatever killed it (kill -9 included).
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)
    except (OSError, AttributeError):
        pass


def main() -> int:
    status_file, separator, *command = sys.argv[1:]
    assert separator == "--", "usage: _supervisor.py STATUS_FILE -- COMMAND ARGS..."
    parent = os.getppid()
    _die_with_parent(signal.SIGTERM)
    if os.getppid() != parent:  # the host died before the line above took effect
        return 1
    try:
        child = subprocess.Popen(command, preexec_fn=lambda: _die_with_parent(signal.SIGKILL))
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
