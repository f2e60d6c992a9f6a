"""A throwaway lab environment for a benchmark run (temp data folder, shared sealing key) and the machine's facts."""

from __future__ import annotations

import os
import platform
import secrets
import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

__all__ = ["REPO_ROOT", "lab_environment", "machine_facts"]

REPO_ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def lab_environment() -> Iterator[Path]:
    """Point every server this process starts at a fresh data folder and one sealing key; undo it afterwards.

    The servers read `LABKIT_DATA_DIR` and `LABKIT_REQUEST_STATE_KEY` (`servers/_wiring.py`), and
    `labkit.host.server_env` hands every `LABKIT_*` variable on to the child processes. Any other
    `LABKIT_*` setting of the caller (a real model, an events file, a work folder) is set aside, so
    the model is the simulator and every run starts from the same state.
    """
    saved = {name: value for name, value in os.environ.items() if name.startswith("LABKIT_")}
    for name in saved:
        del os.environ[name]
    folder = Path(tempfile.mkdtemp(prefix="labkit-bench-"))
    os.environ["LABKIT_DATA_DIR"] = str(folder / "data")
    os.environ["LABKIT_REQUEST_STATE_KEY"] = secrets.token_urlsafe(32)
    try:
        yield folder
    finally:
        for name in [name for name in os.environ if name.startswith("LABKIT_")]:
            del os.environ[name]
        os.environ.update(saved)
        shutil.rmtree(folder, ignore_errors=True)


def machine_facts() -> dict[str, Any]:
    """What the numbers depend on: cores, load, interpreter, library versions, bytecode caching."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average_1_5_15": [round(x, 2) for x in load] if load else None,
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE"),
        "versions": {name: _version(name) for name in ("mcp", "anthropic", "openai", "httpx2", "nbclient")},
    }


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None
