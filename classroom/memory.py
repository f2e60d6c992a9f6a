"""How much memory a process and every process below it use, read from /proc (the room's driver, the benchmarks)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

__all__ = ["TreeMemory", "tree_memory"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class TreeMemory(NamedTuple):
    """Bytes: the root's RSS, the summed RSS of its descendants, and the summed PSS of all of them.

    RSS counts a shared page once per process that maps it (the figure `ps` and `top` show); PSS divides each shared
    page among its sharers: what a forked process really adds.
    """

    rss_root: int
    rss_below: int
    pss: int


def tree_memory(root: int | None = None) -> TreeMemory:
    """The memory of `root` (this process by default) and every process below it, at this moment."""
    root = os.getpid() if root is None else root
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    below: set[int] = set()
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, its_parent in parents.items() if its_parent == parent]
        below.update(children)
        frontier.extend(children)
    return TreeMemory(_rss(root), sum(_rss(pid) for pid in below), sum(_pss(pid) for pid in (root, *below)))


def _rss(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


def _pss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return 0
