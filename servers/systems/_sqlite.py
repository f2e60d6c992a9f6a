"""SQLite files the business systems build on first use and open read-only; a store that cannot be read says why."""

from __future__ import annotations

import errno
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

__all__ = ["StoreUnavailable", "open_read_only"]

# A server runs its tools in worker threads: concurrent first calls must build the file once, not race.
_BUILDING = threading.Lock()
_DAMAGED = ("SQLITE_NOTADB", "SQLITE_CORRUPT")
_LOCKED = ("SQLITE_BUSY", "SQLITE_LOCKED")
_CANNOT_OPEN = ("SQLITE_CANTOPEN", "SQLITE_READONLY", "SQLITE_PERM", "SQLITE_AUTH")


class StoreUnavailable(RuntimeError):
    """A business system's file cannot be read, for a cause a server can foresee and name in plain words: damaged,
    locked by another program, on a full disk, or in a folder it cannot open or create (raised as a ToolError)."""


@contextmanager
def open_read_only(path: Path, fill: Callable[[sqlite3.Connection], None]) -> Iterator[sqlite3.Connection]:
    """A read-only connection to `path`, first building the file with `fill` if it is missing; an SQLite or file
    error while it is built, opened or read is a `StoreUnavailable` naming the file and the cause."""
    try:
        if not path.exists():
            with _BUILDING:
                if not path.exists():
                    _build(path, fill)
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            yield db
    except (sqlite3.Error, OSError) as error:
        raise StoreUnavailable(_cause(path, error)) from error


def _cause(path: Path, error: sqlite3.Error | OSError) -> str:
    """What went wrong with the store at `path`, from the error's code (SQLite's or the system's), not its words."""
    name = getattr(error, "sqlite_errorname", "") or ""
    number = getattr(error, "errno", None)
    if name.startswith(_DAMAGED):
        return f"the store {path} is damaged (not a readable SQLite database); delete it and it is built again"
    if name.startswith(_LOCKED):
        return f"the store {path} is locked by another program; try again once that program is done with it"
    if name.startswith("SQLITE_FULL") or number in (errno.ENOSPC, errno.EDQUOT):
        return f"the disk holding {path.parent} is full; free some space and try again"
    if name.startswith(_CANNOT_OPEN) or number in (errno.EACCES, errno.EROFS, errno.EPERM, errno.ENOTDIR):
        return (
            f"the store {path} cannot be opened or created there ({error}); set LABKIT_DATA_DIR to a folder "
            "this server may write"
        )
    return f"the store {path} cannot be read ({type(error).__name__}: {error})"


def _build(path: Path, fill: Callable[[sqlite3.Connection], None]) -> None:
    # Built under a private name and renamed, so servers starting together never see half a file.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    try:
        with closing(sqlite3.connect(partial)) as db:
            fill(db)
            db.commit()
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
