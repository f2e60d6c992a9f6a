"""Run a command as the reaper of everything it starts, so that its CPU time is counted whole (`tools/run_tests.py`).

    python tools/subreaper.py COMMAND [ARG ...]

A process whose parent ended is re-parented to its nearest "child subreaper" (Linux), else to PID 1, and the CPU time
of a process is added to its parent's children's time only when the parent reaps it. The lab's warm Pythons end
with the pytest that started them, after it, so without a subreaper above them, their CPU time and that of every
server or kernel they forked is lost to the suite's count. This process is that subreaper: it runs COMMAND, reaping
what ends below it meanwhile (a zombie left there would fail the suites' orphan checks), then reaps whatever is
left below it, and exits as COMMAND did. What is still running `_LEFT_S` seconds after COMMAND ended is named on
stderr and left alone.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import time

_PR_SET_CHILD_SUBREAPER = 36
_LEFT_S = 30.0


def _reap_below(deadline: float) -> list[int]:
    """Reap every descendant as it ends, until none is left or the deadline passes; the pids still running."""
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return []
        if pid == 0:
            time.sleep(0.05)
    return [int(pid) for pid in os.listdir("/proc") if pid.isdigit() and _parent(int(pid)) == os.getpid()]


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def main(command: list[str]) -> int:
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1)
    child = subprocess.Popen(command)
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda number, _: child.send_signal(number))
    code = None
    while code is None:  # orphans are reaped as they end, not left as zombies the suite's own checks would see
        pid, status = os.waitpid(-1, 0)
        if pid == child.pid:
            code = child.returncode = os.waitstatus_to_exitcode(status)
    if left := _reap_below(time.monotonic() + _LEFT_S):
        print(f"subreaper: still running {_LEFT_S:.0f} s after {command[0]} ended: {left}", file=sys.stderr)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
