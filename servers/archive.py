"""The archive server: one long export, answered as an MCP Task to a client that can poll one (notebook 10 §4)."""

from __future__ import annotations

from typing import Annotated

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from servers._tasks import Tasks
from servers._wiring import data_dir, foreseen_failures, new_server, run
from servers.jobs import ExportDone, write_export
from servers.systems.order_db import STATUSES, OrderDb

__all__ = ["build_server"]


def build_server(seconds: float = 2.0) -> MCPServer:
    mcp = new_server(
        "archive",
        "An archive of the shop's orders as CSV files: long work, run as a task the client polls.",
        extensions=[Tasks(tools={"archive_orders"})],
    )
    orders = OrderDb(data_dir())

    @mcp.tool()
    async def archive_orders(
        status: Annotated[str, Field(description='Which orders to archive, e.g. "delivered"')],
    ) -> ExportDone:
        """Archive every order with a given status (pending, shipped, delivered or cancelled) to a CSV file.

        Use it when the user wants all such orders kept as a file; it is slow (a few seconds), so a client that
        declares the Tasks extension gets a task to poll instead of waiting.
        Returns {status, rows, file}.
        """
        if status not in STATUSES:
            raise ToolError(f"unknown status {status!r}; valid statuses: {', '.join(STATUSES)}")
        with foreseen_failures():
            found = orders.by_status(status, 10_000)
        await anyio.sleep(seconds)  # stands for the slow part of a real archive (compressing, uploading)
        return write_export(data_dir(), status, found)

    return mcp


if __name__ == "__main__":
    run(build_server)
