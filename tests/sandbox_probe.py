"""A test-only server that probes its own world from inside: what it can see, write, reach and which processes exist."""

import os
import socket
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel


class World(BaseModel):
    root: list[str]
    visible: list[str]
    written: list[str]
    connected: bool
    pid: int
    processes: int
    environment: dict[str, str]


def _writes(path: str) -> bool:
    try:
        Path(path).write_text("written from inside the sandbox")
    except OSError:
        return False
    return True


def _connects(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return True
    except OSError:
        return False


def build_server() -> MCPServer:
    mcp = MCPServer("probe", log_level="WARNING")

    @mcp.tool()
    def world(look: list[str], write: list[str], port: int) -> World:
        """Which of `look` exist, which of `write` can be written, whether 127.0.0.1:`port` answers, `/`'s names,
        this process's id, how many processes it can see, and its environment."""
        return World(
            root=sorted(os.listdir("/")),
            visible=[p for p in look if os.path.lexists(p)],
            written=[p for p in write if _writes(p)],
            connected=_connects(port),
            pid=os.getpid(),
            processes=sum(name.isdigit() for name in os.listdir("/proc")),
            environment=dict(os.environ),
        )

    return mcp


if __name__ == "__main__":
    build_server().run()
