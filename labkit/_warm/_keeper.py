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
    for pid in children_of():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue


def main() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as the warm Python: its starter decides when it stops
    subprocess.Popen(sys.argv[1:], close_fds=False, preexec_fn=lambda: libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL))
    threading.Thread(target=_end_all_when_our_starter_ends, daemon=True).start()
    while True:
        try:
            os.wait()
        except ChildProcessError:  # nothing left below us
            return


if __name__ == "__main__":
    main()
