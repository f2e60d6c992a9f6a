"""Who listens on a local port: so the host talks to the HTTP server it started, not whatever holds the port."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["listened_by"]

_LISTEN = "0A"
_TABLES = ("/proc/net/tcp", "/proc/net/tcp6")


def listened_by(server: int, port: int) -> bool | None:
    """Whether process `server` or a child of it holds the socket listening on `port`; None where /proc cannot say."""
    inodes = _listening_sockets(port)
    if inodes is None:
        return None
    wanted = {f"socket:[{inode}]" for inode in inodes}
    for child in [server, *_children(server)]:
        try:
            fds = os.listdir(f"/proc/{child}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{child}/fd/{fd}") in wanted:
                    return True
            except OSError:
                continue
    return False


def _listening_sockets(port: int) -> set[str] | None:
    inodes, readable = set(), False
    for table in _TABLES:
        try:
            rows = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        readable = True
        for row in rows:
            fields = row.split()
            if fields[3] == _LISTEN and int(fields[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(fields[9])
    return inodes if readable else None


def _children(parent: int) -> list[int]:
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # The command name (field 2) may hold spaces or parentheses; the parent pid follows the last ")".
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            children.append(int(entry))
    return children
