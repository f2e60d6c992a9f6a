"""The jobs server: a slow export that reports progress and can be cancelled, and the same export as a job handle."""

from __future__ import annotations

import asyncio
import csv
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from servers._wiring import data_dir, new_server, run
from servers.systems.order_db import STATUSES, Order, OrderDb

__all__ = ["BATCHES", "ExportDone", "JobState", "build_server", "write_export"]

BATCHES = 4
"""An export reads the orders in this many batches; each batch is one progress step."""
_STATUS_HELP = 'Which orders to export: "pending", "shipped", "delivered" or "cancelled", e.g. "pending".'


class ExportDone(BaseModel):
    status: str = Field(description="The order status exported")
    rows: int = Field(description="How many orders the CSV file holds")
    file: str = Field(description="The CSV file's name in the exports folder, e.g. pending.csv")


class JobState(BaseModel):
    job: str = Field(description="The handle to pass to export_status")
    state: Literal["working", "completed", "failed"]
    done: int = Field(description="Batches finished so far")
    total: int = Field(description="Batches in all")
    result: ExportDone | None = Field(default=None, description="Set once the state is completed")


def write_export(folder: Path, status: str, orders: list[Order]) -> ExportDone:
    """Write the orders as `<folder>/exports/<status>.csv` and say what was written."""
    path = folder / "exports" / f"{status}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as file:
        writer = csv.DictWriter(file, fieldnames=list(Order.model_fields))
        writer.writeheader()
        writer.writerows(order.model_dump() for order in orders)
    return ExportDone(status=status, rows=len(orders), file=path.name)


@dataclass
class _Job:
    status: str
    done: int = 0
    result: ExportDone | None = None
    error: str | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)


def build_server(step_seconds: float = 0.25) -> MCPServer:
    mcp = new_server("jobs", "Exports of the shop's orders to CSV files: slow work, reported step by step.")
    orders = OrderDb(data_dir())
    jobs: dict[str, _Job] = {}

    def batches(status: str) -> list[list[Order]]:
        if status not in STATUSES:
            raise ToolError(f"unknown status {status!r}; valid statuses: {', '.join(STATUSES)}")
        found = orders.by_status(status, 50)
        size = -(-len(found) // BATCHES) or 1
        return [found[i * size : (i + 1) * size] for i in range(BATCHES)]

    @mcp.tool()
    async def export_orders(status: Annotated[str, Field(description=_STATUS_HELP)], ctx: Context) -> ExportDone:
        """Export the newest orders with a given status (pending, shipped, delivered or cancelled) to a CSV file.

        Use it when the user wants to see or keep a list of orders as a file. It reads them in batches and
        takes about a second.
        It reports progress after each batch, and stops if the caller cancels.

        Returns {status, rows, file}, e.g. pending -> rows 18, file pending.csv.
        """
        read: list[Order] = []
        for number, batch in enumerate(batches(status), 1):
            await anyio.sleep(step_seconds)
            read += batch
            await ctx.report_progress(number, BATCHES, f"read {len(read)} {status} orders")
        return write_export(data_dir(), status, read)

    async def work(job: _Job) -> None:
        read: list[Order] = []
        for batch in batches(job.status):
            await anyio.sleep(step_seconds)
            read += batch
            job.done += 1
        job.result = write_export(data_dir(), job.status, read)

    @mcp.tool()
    async def start_export(status: Annotated[str, Field(description=_STATUS_HELP)]) -> JobState:
        """Start exporting the orders with a given status to a CSV file, and answer at once with a job handle.

        Use it for an export the user does not want to wait for; then ask export_status with the handle.
        Returns {job, state, done, total}: state is "working" until the file is written.
        """
        batches(status)  # a bad status is an error now, not a failed job later
        handle = f"job_{secrets.token_urlsafe(12)}"  # unguessable: the handle is the only key to the job
        job = jobs[handle] = _Job(status)
        job.task = asyncio.get_running_loop().create_task(work(job))
        return _state(handle, job)

    @mcp.tool()
    def export_status(
        job: Annotated[str, Field(description="The handle start_export returned, e.g. job_x1y2")],
    ) -> JobState:
        """Say how far an export started with start_export has got, and its result once it is done.

        Use it with the handle start_export returned; poll until state is "completed" or "failed".
        Returns {job, state, done, total, result}.
        """
        if job not in jobs:
            raise ToolError(f"no job {job!r} on this server: pass the handle start_export returned")
        return _state(job, jobs[job])

    return mcp


def _state(handle: str, job: _Job) -> JobState:
    if job.task is not None and job.task.done() and job.task.exception() is not None:
        job.error = str(job.task.exception())
    state: Literal["working", "completed", "failed"] = (
        "failed" if job.error else "completed" if job.result else "working"
    )
    return JobState(job=handle, state=state, done=job.done, total=BATCHES, result=job.result)


if __name__ == "__main__":
    run(build_server)
