"""A test-only server that tells what it was started with: its environment, folder, command line and import path."""

import os
import sys

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel


class StartedWith(BaseModel):
    value: str | None
    cwd: str
    argv: list[str]
    pid: int
    program: str
    main_file: str
    path: list[str]
    backend: str


def build_server() -> MCPServer:
    mcp = MCPServer("env", log_level="WARNING")

    @mcp.tool()
    def started_with(name: str) -> StartedWith:
        """One environment variable's value, the working folder, the command line, the process id, `sys.path`, and
        the backend matplotlib chose when imported (from the environment it was imported in)."""
        import matplotlib

        backend = matplotlib.rcParams._get("backend")  # a name, or a marker object: "choose one on first use"
        return StartedWith(
            value=os.environ.get(name),
            cwd=os.getcwd(),
            argv=sys.argv[1:],
            pid=os.getpid(),
            program=sys.argv[0],
            main_file=str(sys.modules["__main__"].__file__),
            path=sys.path,
            backend=backend if isinstance(backend, str) else "chosen on first use",
        )

    @mcp.tool()
    def imported(module: str) -> bool:
        """Whether `module` is in this process's `sys.modules` (inherited from the warm Python, or imported since)."""
        return module in sys.modules

    return mcp


if __name__ == "__main__":
    build_server().run()
