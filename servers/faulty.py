"""The faulty server exists to be broken: it hangs, crashes, floods and raises so the error lesson has real failures."""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import anyio
from mcp.server.mcpserver import MCPServer

from servers._wiring import new_server, run

__all__ = ["MAX_KILOBYTES", "MAX_SLEEP_SECONDS", "build_server"]

MAX_SLEEP_SECONDS = 3600.0
MAX_KILOBYTES = 16 * 1024


def build_server() -> MCPServer:
    mcp = new_server("faulty", "A deliberately broken server for the error lesson. Never give it to a real agent.")
    # Text results only: a structuredContent copy would send huge_result's text twice.

    @mcp.tool(structured_output=False)
    async def sleep_for(seconds: float) -> str:
        """Wait `seconds` before answering, to show what a client timeout looks like.

        Use it only in the error lesson. Args: seconds: how long to hang, 0 to 3600, e.g. 30.
        Returns "slept N s" if nobody gave up first.
        """
        await anyio.sleep(max(0.0, min(seconds, MAX_SLEEP_SECONDS)))
        return f"slept {seconds:g} s"

    @mcp.tool(structured_output=False)
    def crash_now() -> NoReturn:
        """Kill this server process in the middle of the call, to show a transport failure. Takes no arguments.

        Use it only in the error lesson. It never returns: the connection closes instead.
        """
        print("faulty: crash_now called, exiting with status 3", file=sys.stderr, flush=True)  # noqa: T201 - to stderr on purpose: the error lesson reads it there
        os._exit(3)

    @mcp.tool(structured_output=False)
    def huge_result(kilobytes: int) -> str:
        """Return a text of `kilobytes` KiB, to show what an oversized tool result does to a context window.

        Use it only in the error lesson. Args: kilobytes: size of the text, 1 to 16384, e.g. 512.
        Returns a line of repeated "x" characters of that size.
        """
        return "x" * (1024 * max(1, min(kilobytes, MAX_KILOBYTES)))

    @mcp.tool(structured_output=False)
    def raise_error(message: str) -> str:
        """Raise a plain Python exception, to show how a crash inside a tool reaches the client.

        Use it only in the error lesson. Args: message: the exception text, e.g. "disk full".
        Returns nothing: the client gets isError: true with a generic text; `message` stays in the server log.
        """
        raise RuntimeError(message)

    return mcp


if __name__ == "__main__":
    run(build_server)
