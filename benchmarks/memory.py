"""Peak memory of this process plus every process it started (servers, kernels), sampled by a thread."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType

__all__ = ["PeakRSS", "tree_rss"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def tree_rss(root: int | None = None) -> tuple[int, int, int]:
    """(RSS of `root`, summed RSS of all its descendants, summed PSS of all of them) in bytes; from /proc.

    PSS divides each shared page among the processes sharing it: what a forked process really adds.
    """
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                pass
    tree, frontier = set(), [root]
    while frontier:
        pid = frontier.pop()
        kids = [p for p, parent in parents.items() if parent == pid]
        tree.update(kids)
        frontier.extend(kids)
    return _proc_rss(root), sum(_proc_rss(pid) for pid in tree), sum(_proc_pss(pid) for pid in (root, *tree))


def _proc_rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _proc_pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0


class PeakRSS:
    """`with PeakRSS() as peak: ...` then `peak.as_dict()`: the highest summed RSS seen every `interval` s.

    RSS counts shared pages (Python's own libraries, a warm Python's imports) once per process, so the total
    overstates what the machine needs; it is the figure `ps` and `top` show. PSS is the memory really used.
    """

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak_total = self.peak_self = self.peak_children = self.peak_pss = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="peak-rss", daemon=True)

    def __enter__(self) -> PeakRSS:
        self._sample()
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        own, children, pss = tree_rss()
        self.samples += 1
        self.peak_pss = max(self.peak_pss, pss)
        self.peak_self = max(self.peak_self, own)
        self.peak_children = max(self.peak_children, children)
        self.peak_total = max(self.peak_total, own + children)

    def as_dict(self) -> dict[str, float]:
        mib = 1024 * 1024
        return {
            "peak_total_mib": round(self.peak_total / mib, 1),
            "peak_process_mib": round(self.peak_self / mib, 1),
            "peak_children_mib": round(self.peak_children / mib, 1),
            "peak_pss_mib": round(self.peak_pss / mib, 1),
            "samples": self.samples,
        }
