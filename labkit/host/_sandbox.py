"""Confinement the OS provides: an untrusted stdio server run under bubblewrap, seeing only what its launch names."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Confinement", "confinement", "sandboxed"]

_DATA_ENV = ("LABKIT_DATA_DIR", "LABKIT_WORKDIR")


@dataclass(frozen=True)
class Confinement:
    """Whether this machine can confine a server, and why (notebook 07): said plainly, never assumed."""

    confined: bool
    why: str


@functools.cache
def confinement() -> Confinement:
    """Probe once: is `bwrap` installed, and may it create the namespaces it needs here (containers may refuse)?"""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Confinement(False, "bubblewrap (bwrap) is not installed: `apt-get install bubblewrap`")
    probe = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"],
                           capture_output=True, text=True, timeout=20)
    if probe.returncode != 0:
        return Confinement(False, f"bwrap cannot create namespaces here: {probe.stderr.strip()[:200]}")
    return Confinement(True, "bubblewrap: own mount, PID, network and user namespaces")


def sandboxed(command: Sequence[str], env: Mapping[str, str], cwd: str | None, hide: Sequence[str] = ()) -> list[str]:
    """`command` under bwrap: the file system read-only, the user's home, /tmp and `hide` replaced by empty folders,
    no view of the host's processes (so not of `/proc/<ppid>/environ`), no network; writable only the
    data folder, the working folder and the events file's folder its environment names (notebook 07)."""
    home = os.path.expanduser("~")
    arguments = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                 "--tmpfs", home, "--unshare-all", "--die-with-parent", "--new-session"]
    # The lab, its venv and Python stay visible even where they live under a folder replaced above (a clone in /tmp).
    masked = [Path(home), Path("/tmp")]
    readable = [Path(__file__).resolve().parents[2], Path(sys.prefix), Path(sys.base_prefix)]
    arguments += [a for path in readable if any(path.is_relative_to(m) for m in masked)
                  for a in ("--ro-bind", str(path), str(path))]
    writable = [env[k] for k in _DATA_ENV if k in env]
    if "LABKIT_EVENTS_FILE" in env:
        writable.append(str(Path(env["LABKIT_EVENTS_FILE"]).parent))
    writable += [path for path in (cwd, env.get("HOME"), env.get("TMPDIR")) if path]
    for path in dict.fromkeys(writable):
        Path(path).mkdir(parents=True, exist_ok=True)
        arguments += ["--bind", path, path]
    for path in hide:
        arguments += ["--tmpfs", str(path)]
    if cwd:
        arguments += ["--chdir", cwd]
    return [*arguments, "--", *command]
