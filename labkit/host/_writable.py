"""Folders the lab writes, checked before a run: a read-only checkout is named up front, with the setting to use."""

from __future__ import annotations

import os
from pathlib import Path

from ..processes import DATA_DIR_ENV, DEFAULT_DATA_DIR

__all__ = ["data_folder", "unwritable"]


def data_folder() -> Path:
    """Where the lab's servers keep their business systems: `LABKIT_DATA_DIR`, else the checkout's `data/`."""
    return Path(os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR)


def unwritable(folder: Path) -> Path | None:
    """The folder that stops `folder` being written (itself, or the nearest existing folder above it, when it is read
    only or not ours), or None when it can be written or created."""
    existing = folder.absolute()
    while not existing.exists() and existing.parent != existing:
        existing = existing.parent
    return None if existing.is_dir() and os.access(existing, os.W_OK | os.X_OK) else existing
