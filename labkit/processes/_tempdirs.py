"""Lab temp folders: named after the process that owns them, removed when it closes or exits, swept if it was killed."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import weakref
from pathlib import Path

__all__ = ["LabTempDir", "sweep_dead_owners"]

# labkit-<kind>-p<pid>s<start time>-<random>: the start time tells a dead owner from a new process given its pid.
_NAME = re.compile(r"labkit-[a-z0-9-]+?-p(?P<pid>\d+)s(?P<start>\d+)-[^-]+")
_KIND = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), None if there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses; the fields after its last ")" are plain.
    return stat.rsplit(")", 1)[1].split()[19]


def _owner() -> str:
    return f"p{os.getpid()}s{_start_time(os.getpid()) or 0}"


class LabTempDir(os.PathLike):
    """A folder under the temp folder, `labkit-<kind>-p<pid>s<start>-…`, that never outlives its owner (notebook 08).

    `remove()` deletes it (the owner closed); otherwise it goes when this object is collected or the
    process exits normally (a kernel shut down by JupyterLab or nbval), and a process killed outright
    leaves it to the sweep that every new lab temp folder starts with (`sweep_dead_owners`).
    """

    def __init__(self, kind: str) -> None:
        if not _KIND.fullmatch(kind):
            raise ValueError(f"a lab temp folder's kind is lowercase words joined by '-' (e.g. 'events'), not {kind!r}")
        sweep_dead_owners()
        self.path = Path(tempfile.mkdtemp(prefix=f"labkit-{kind}-{_owner()}-"))
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.path, ignore_errors=True)

    def __fspath__(self) -> str:
        return str(self.path)

    def __repr__(self) -> str:
        return f"LabTempDir({str(self.path)!r})"

    def remove(self) -> None:
        """Delete the folder and everything in it now (once; later calls do nothing)."""
        self._finalizer()


def sweep_dead_owners(folder: str | Path | None = None) -> list[Path]:
    """Remove this user's lab temp folders whose owner process is gone (killed, so it could not clean up).

    An owner is alive when its pid runs with the start time in the folder's name; a pid given to a new
    process does not keep a dead owner's folder. Other users' folders and unnamed ones are left alone.
    """
    removed: list[Path] = []
    if _start_time(os.getpid()) is None:  # no /proc: no way to tell a live owner from a dead one
        return removed
    root = Path(folder if folder is not None else tempfile.gettempdir())
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        match = _NAME.fullmatch(entry.name)
        if match is None or _start_time(int(match["pid"])) == match["start"]:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(Path(entry.path))
    return removed
