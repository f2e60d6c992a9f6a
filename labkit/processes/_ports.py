"""Local ports: one for a server to listen on, and who listens on it (the HTTP server the host started, or not)."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

__all__ = ["free_port", "listened_by"]

_LISTEN = "0A"
_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
_BELOW_EPHEMERAL = 16384
_PICKS = random.SystemRandom()  # a notebook's random.seed() must not make two kernels pick the same ports


def free_port() -> int:
    """A port on 127.0.0.1 that is free now, for a server to listen on (notebook 02).

    Picked below the system's ephemeral range: a socket bound to port 0 — a Jupyter kernel's, or the
    source port of any outgoing connection — cannot take it in the moment before the server binds it.
    """
    try:
        low = int(_EPHEMERAL.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768  # Linux's default
    for _ in range(64):
        port = _PICKS.randrange(max(1024, low - _BELOW_EPHEMERAL), low)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
