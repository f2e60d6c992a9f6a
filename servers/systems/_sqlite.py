"""SQLite files the business systems build on first use and open read-only."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

__all__ = ["open_read_only"]

# A server runs its tools in worker threads: concurrent first calls must build the file once, not race.
_BUILDING = threading.Lock()


def open_read_only(path: Path, fill: Callable[[sqlite3.Connection], None]) -> closing[sqlite3.Connection]:
    """A read-only connection to `path`, first building the file with `fill` if it is missing."""
    if not path.exists():
        with _BUILDING:
            if not path.exists():
                _build(path, fill)
    return closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True))


def _build(path: Path, fill: Callable[[sqlite3.Connection], None]) -> None:
    # Built under a private name and renamed, so servers starting together never see half a file.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
    partial.unlink(missing_ok=True)
    with closing(sqlite3.connect(partial)) as db:
        fill(db)
        db.commit()
    os.replace(partial, path)
