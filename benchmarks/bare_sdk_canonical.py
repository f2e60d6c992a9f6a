"""The canonical task's MCP work with the plain SDK, one step after the other: the yardstick of figure 8.

`python benchmarks/bare_sdk_canonical.py` starts the logs server and then the charts server over stdio,
lists both, calls `query_errors`, then `render_error_trend`, answering its question (which space)
through the SDK's elicitation callback, and stops both. No model, no trace, no labkit: what a
learner would write by hand. The servers read `LABKIT_DATA_DIR` and `LABKIT_REQUEST_STATE_KEY` from the
environment, as under the lab.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_types import ElicitResult

REPO_ROOT = Path(__file__).resolve().parent.parent
ARGUMENTS = {"service": "order-service", "since": "2026-10-29T20:00"}


def server(name: str) -> StdioServerParameters:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    return StdioServerParameters(command=sys.executable, args=["-m", f"servers.{name}"], cwd=REPO_ROOT, env=env)


async def answer(context: Any, params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"space": "personal"})


async def main() -> None:
    async with (
        Client(stdio_client(server("logs"))) as logs,
        Client(stdio_client(server("charts")), elicitation_callback=answer) as charts,
    ):
        await logs.list_tools()
        await charts.list_tools()
        found = await logs.call_tool("query_errors", ARGUMENTS)
        chart = await charts.call_tool("render_error_trend", ARGUMENTS)
    if found.is_error or chart.is_error:
        raise SystemExit(f"a call failed: {found.content if found.is_error else chart.content}")


if __name__ == "__main__":
    anyio.run(main)
