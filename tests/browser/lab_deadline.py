"""labkit's `Deadline` over a JupyterLab server's process tree, for the browser tests (whose venv has no labkit).

Run by the lab's Python (`python -m tests.browser.lab_deadline PID`), one per test session: each line read is
`start SECONDS` (a new deadline, from now) or `passed` (has it passed?), and each is answered by one line of JSON.
When the deadline has passed, the answer says why, as labkit judges it (`cause`: "hung" when the server's processes
are alive but neither ran nor waited for a CPU at the end, "busy" when they waited for one), and how each process of
the tree stands (its state and CPU seconds): a stopped kernel is named as such.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import psutil

from labkit.processes import Deadline


def _processes(tree: int) -> list[dict[str, Any]]:
    """The server and each process it started: pid, state, CPU seconds and the start of its command line."""
    found = []
    try:
        root = psutil.Process(tree)
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:
        return []
    for process in processes:
        try:
            with process.oneshot():
                command = " ".join(process.cmdline())
                found.append(
                    {
                        "pid": process.pid,
                        "state": process.status(),
                        "cpu_s": round(sum(process.cpu_times()[:2]), 1),
                        "command": command[:160],
                    }
                )
        except psutil.Error:
            continue
    return found


def main(tree: int) -> None:
    deadline: Deadline | None = None
    for line in sys.stdin:
        verb, *rest = line.split()
        if verb == "start":
            deadline = Deadline(float(rest[0]), tree=tree)
            answer: dict[str, Any] = {}
        elif deadline is None or not deadline.passed():
            answer = {"passed": False}
        else:
            answer = {
                "passed": True,
                "cause": deadline.cause(),
                "note": deadline.busy_note(),
                "waited_s": round(deadline.waited(), 1),
                "processes": _processes(tree),
            }
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
