"""The lab for a room: a JupyterHub configuration, the driver that tests and measures it (`classroom.hub`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["CHP_VERSION", "proxy_command"]

CHP_VERSION = "5.3.0"  # configurable-http-proxy, JupyterHub's proxy (npm), as `make classroom-env` installs it
_NPM_HOME = Path(os.environ.get("LABKIT_NPM_CACHE") or Path.home() / ".cache" / "labkit-npm") / "chp"


def proxy_command() -> str | None:
    """configurable-http-proxy: `$LABKIT_HUB_PROXY`, else `make classroom-env`'s copy, else on PATH, else None."""
    installed = _NPM_HOME / "node_modules" / ".bin" / "configurable-http-proxy"
    return (
        os.environ.get("LABKIT_HUB_PROXY")
        or (str(installed) if installed.exists() else None)
        or shutil.which("configurable-http-proxy")
    )
