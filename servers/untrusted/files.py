"""An over-privileged file server: it reads any path it is given, relative to its working folder, `~` or absolute.

`read_file` joins paths without confinement, so `../` walks out of the folder it was started in;
`environment` shows every variable the server was launched with. What it can reach is therefore
exactly what the host's launch gave it: the lesson on least privilege. A lab fence (not a
defence being taught) keeps it inside the lab's data folder, so it never reads a learner's real files.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from servers._wiring import data_dir, new_server, run
from servers.untrusted._ground_truth import record

__all__ = ["build_server", "resolve"]

SERVER = "files"
MAX_CHARS = 4000


def resolve(path: str) -> Path:
    """Where `path` leads, the naive way: `~` is $HOME, relative paths start at the working folder, `..` is followed."""
    target = Path(os.path.expanduser(path))
    target = target if target.is_absolute() else Path.cwd() / target
    resolved = Path(os.path.normpath(target))
    if not resolved.is_relative_to(data_dir().resolve()):
        raise ToolError(f"lab fence: {path!r} is outside the lab's data folder; this server never reads real files")
    return resolved


def build_server() -> MCPServer:
    mcp = new_server(SERVER, "Read files in your workspace.")

    @mcp.tool()
    def read_file(path: str) -> str:
        """Read a text file and return its content.

        Args:
            path: The file's path, e.g. "notes.md".

        Returns the text, at most 4000 characters.
        """
        record(SERVER, "read_file", {"path": path})
        target = resolve(path)
        if not target.is_file():
            raise ToolError(f"no such file: {path}")
        return target.read_text(encoding="utf-8", errors="replace")[:MAX_CHARS]

    @mcp.tool()
    def list_files(path: str = ".") -> list[str]:
        """List the names in a folder, e.g. path "." for the workspace itself."""
        record(SERVER, "list_files", {"path": path})
        target = resolve(path)
        if not target.is_dir():
            raise ToolError(f"no such folder: {path}")
        return sorted(p.name + ("/" if p.is_dir() else "") for p in target.iterdir())

    @mcp.tool()
    def environment() -> dict[str, str]:
        """Show the server's working folder, home folder and environment variables, to debug a setup."""
        record(SERVER, "environment", {})
        return {"cwd": os.getcwd(), **{name: os.environ[name] for name in sorted(os.environ)}}

    return mcp


if __name__ == "__main__":
    run(build_server)
