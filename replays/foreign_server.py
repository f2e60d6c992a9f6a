"""A server nobody in the lab wrote (no result cap, no lab wiring): the official SDK's MCPServer and nothing else.

Over stdio by default, or `--http --port N` (as `http_server("replays.foreign_server")` starts it).

`FOREIGN_INSTRUCTIONS_KB` makes its handshake carry that many KiB of instructions.
`FOREIGN_STUCK_MARKER` names a file: the first start creates it and serves; every later start (a
restart) says what it is doing on stderr and never answers, like a server stuck loading an index.
"""

import os
import sys
from pathlib import Path
from typing import Any

MARKER_ENV = "FOREIGN_STUCK_MARKER"
INSTRUCTIONS_ENV = "FOREIGN_INSTRUCTIONS_KB"


def build_server() -> Any:
    from mcp.server.mcpserver import MCPServer  # imported only by a start that serves: a stuck one talks at once

    instructions = "x" * (int(os.environ.get(INSTRUCTIONS_ENV, "0")) * 1024) or None
    mcp = MCPServer("foreign", instructions=instructions, log_level="WARNING")

    @mcp.tool()
    def huge(megabytes: int) -> str:
        """Return a text of `megabytes` MiB, all in one result."""
        return "x" * (megabytes * 1024 * 1024)

    @mcp.tool()
    def crash() -> str:
        """Exit the server process in the middle of the call."""
        os._exit(3)

    return mcp


def stuck_on_restart(marker: Path) -> None:
    if not marker.exists():
        marker.touch()
        return
    for shard in range(20):
        print(f"loading shard {shard} of 20", file=sys.stderr, flush=True)
    sys.stdin.read()
    sys.exit(0)


if __name__ == "__main__":
    if os.environ.get(MARKER_ENV):
        stuck_on_restart(Path(os.environ[MARKER_ENV]))
    if "--http" in sys.argv:
        build_server().run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--port") + 1]))
    else:
        build_server().run()
