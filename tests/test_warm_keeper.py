"""The keeper above the warm Python for kernels: what it kept alive ends when its starter (Jupyter) ends."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KEEPER = Path(__file__).resolve().parents[1] / "labkit" / "_warm" / "_keeper.py"
# A warm Python's stand-in: it forks a child of its own (a kernel) that would outlive it, and says the child's pid.
_FORKS_A_KERNEL = """
import os, time
kernel = os.fork()
if kernel == 0:
    os.setsid()
    time.sleep(600)
else:
    print(kernel, flush=True)
    time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_when_jupyter_ends_the_keeper_ends_the_kernels_it_adopted_and_then_itself() -> None:
    keeper = subprocess.Popen(
        [sys.executable, str(KEEPER), sys.executable, "-c", _FORKS_A_KERNEL],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    kernel = int(keeper.stdout.readline()) if keeper.stdout else 0
    try:
        assert _alive(kernel)
        keeper.stdin.close() if keeper.stdin else None  # Jupyter, the keeper's starter, ended
        keeper.wait(timeout=30)  # it ends (as the warm Python it ended: killed)
        assert not _alive(kernel), "a kernel outlived the Jupyter that started it"
    finally:
        for pid in (kernel, keeper.pid):
            if _alive(pid):
                os.kill(pid, 9)
