"""The keeper above a warm Python for kernels: a kernel whose warm Python died is adopted here and lives on.

A kernel takes its adoption by init for the death of its parent and exits (ipykernel's parent poller), so the warm
Python that forks kernels runs below this small subreaper (standard library only): `python _keeper.py COMMAND...` runs
COMMAND with our descriptors, reaps whatever ends below us, ends once nothing is left below, and when our stdin closes
(our starter, Jupyter, ended) ends what is left.
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def children_of(pid: int | str = "self") -> list[int]:
    """The pids of a process's children, oldest first (for a keeper: its warm Python, then kernels it adopted)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as listed:
                found += [int(child) for child in listed.read().split()]
        except OSError:
            continue
    return found


def _end_all_when_our_starter_ends() -> None:
    while os.read(0, 4096):
        pass
    # Ending the warm Python makes us the parent of its kernels (we are their subreaper): they are ended in turn,
    # until nothing is left below us and the main thread's wait returns.
    while below := children_of():
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
        time.sleep(0.02)


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as the warm Python: its starter decides when it stops
    warm = subprocess.Popen(
        sys.argv[1:], close_fds=False, preexec_fn=lambda: libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    )
    threading.Thread(target=_end_all_when_our_starter_ends, daemon=True).start()
    status = 0
    while True:
        try:
            pid, code = os.wait()
        except ChildProcessError:  # nothing left below us: end as the warm Python ended, so a starter can tell
            sys.exit(status if status >= 0 else 128 - status)
        if pid == warm.pid:
            status = os.waitstatus_to_exitcode(code)


if __name__ == "__main__":
    main()
