"""Confinement the OS provides: a stdio server run under bubblewrap, seeing only what its launch names."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

from .._i18n import _
from ..server_contract import EVENTS_FILE_ENV

__all__ = ["SYSTEM_FILES", "Confinement", "confinement", "sandboxed"]

SYSTEM_FILES = (
    "/usr",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
    "/etc/alternatives",
    "/etc/ssl/certs",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
)
"""What every sandboxed server may read of the machine: the system's programs and libraries and a few files the C
library and Python read at start; never `/etc` whole (as root, `/etc/shadow` is readable), never `/home` or `/root`."""
_MERGED_USR = ("/bin", "/sbin", "/lib", "/lib32", "/lib64")
_REPO = Path(__file__).resolve().parents[2]
_LAB_CODE = (_REPO / "servers", _REPO / "labkit")
"""The lab's code a lab server imports; the repository's other folders (its `data/` among them) stay out of sight."""


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
        return Confinement(False, _("bubblewrap (bwrap) is not installed: `apt-get install bubblewrap`"))
    probe = subprocess.run(
        [bwrap, *_system(), "--unshare-all", "--die-with-parent", "true"],
        check=False,
        capture_output=True,
        text=True,
        timeout=20,
    )
    if probe.returncode != 0:
        return Confinement(
            False, _("bwrap cannot create namespaces here: {error}").format(error=probe.stderr.strip()[:200])
        )
    return Confinement(True, _("bubblewrap: own file system view, PID, network, IPC and user namespaces"))


def sandboxed(
    command: Sequence[str],
    env: Mapping[str, str],
    cwd: str | None,
    *,
    readable: Sequence[str] = (),
    writable: Sequence[str] = (),
) -> list[str]:
    """`command` under bwrap, in a file system built from nothing: the system's programs (`SYSTEM_FILES`), this
    Python and its packages, the lab's code and `readable` to read; its working folder (unless `readable`), the
    HOME, TMPDIR and events folder its environment names and `writable` to write; everything else, the
    lab's data folder and other servers' state included, absent. Own PID, network, IPC and user namespaces, so
    no view of the host's processes (`/proc/<ppid>/environ`) and no network at all (notebook 07)."""
    arguments = [
        "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        *_system(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--tmpfs",
        "/tmp",
    ]
    own_code = [
        Path(sys.base_prefix),
        Path(sys.prefix),
        Path(sys.executable).resolve().parent,
        *_LAB_CODE,
        *_command_folder(command),
        *map(Path, readable),
    ]
    for path in dict.fromkeys(str(p) for p in own_code if p.exists()):
        arguments += ["--ro-bind", path, path]
    # A working folder named readable (a workspace the server is shown) stays read-only.
    own = [cwd if cwd not in readable else None, env.get("HOME"), env.get("TMPDIR"), *writable]
    if EVENTS_FILE_ENV in env:
        own.append(str(Path(env[EVENTS_FILE_ENV]).parent))
    for path in dict.fromkeys(p for p in own if p):
        Path(path).mkdir(parents=True, exist_ok=True)
        arguments += ["--bind", path, path]
    # The root and /tmp the folders above hang from are read-only: nothing else can be written, not even to vanish.
    arguments += ["--remount-ro", "/", "--remount-ro", "/tmp"]
    # The SDK adds a few of the host's variables (SHELL, USER...) to every server's; a sandboxed one has only `env`.
    arguments += [a for name in DEFAULT_INHERITED_ENV_VARS if name not in env for a in ("--unsetenv", name)]
    if cwd:
        arguments += ["--chdir", cwd]
    return [*arguments, "--", *command]


def _system() -> list[str]:
    arguments = []
    for path in _MERGED_USR:
        if os.path.islink(path):  # Debian and most distributions: /bin -> usr/bin
            arguments += ["--symlink", os.readlink(path), path]
        else:
            arguments += ["--ro-bind-try", path, path]
    for path in SYSTEM_FILES:
        arguments += ["--ro-bind-try", path, path]
    return arguments


def _command_folder(command: Sequence[str]) -> list[Path]:
    """The folder of the program run, when it is not one of the system's: an installed server's own files."""
    program = shutil.which(command[0]) if command else None
    if program is None:
        return []
    folder = Path(program).resolve().parent
    return [] if folder.is_relative_to("/usr") else [folder]
