"""The orders server (seed 001's ops demo): a tool over the order database, a policy resource and a report prompt."""

from __future__ import annotations

import re
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ToolAnnotations
from pydantic import BaseModel, Field

from servers._wiring import data_dir, foreseen_failures, new_server, run
from servers.systems.order_db import STATUSES, Order, OrderDb

__all__ = ["MAX_LIMIT", "ORDER_POLICY", "OrderList", "build_server", "clamp_limit", "weekly_report_prompt"]

MAX_LIMIT = 50
_ISO_WEEK = re.compile(r"\d{4}-W\d{2}")
ORDER_POLICY = """\
# Order policy (teaching example)

- **Shipping**: paid orders leave the warehouse within 48 hours; an order still `pending`
  after 72 hours is escalated to the operations lead.
- **Cancellation**: a customer may cancel free of charge until the order is `shipped`.
- **Returns**: delivered goods may be returned within 7 days if unused; refunds are paid
  within 5 working days of the return arriving.
- **Large orders**: orders above 10,000 CNY need a second approval before shipping.
"""


class OrderList(BaseModel):
    status: str = Field(description="The status that was queried")
    limit: int = Field(description=f"The limit actually applied (1 to {MAX_LIMIT})")
    count: int = Field(description="How many orders are listed")
    orders: list[Order] = Field(description="Newest first")


_STATUS_HELP = 'One of "pending", "shipped", "delivered", "cancelled", e.g. "pending".'


def clamp_limit(limit: int) -> int:
    return max(1, min(limit, MAX_LIMIT))


def weekly_report_prompt(week: str) -> str:
    if not _ISO_WEEK.fullmatch(week):
        raise ValueError(f"week must look like 2026-W44 (ISO year and week number); got {week!r}")
    return (
        f"Write the weekly order report for {week}. Use the query_orders tool for each status "
        f"({', '.join(STATUSES)}), count the orders created in {week} and add up their amounts per status. "
        "Check the order policy resource for pending orders older than 72 hours and orders above 10,000 CNY. "
        "End with three sentences on anything unusual. Use only numbers the tool returned; "
        "if it returned nothing, say so instead of guessing."
    )


def build_server() -> MCPServer:
    orders = OrderDb(data_dir())
    mcp = new_server("orders", "The shop's orders: look them up by status, read the policy, draft a weekly report.")

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False))
    def query_orders(
        status: Annotated[str, Field(description=_STATUS_HELP)],
        limit: Annotated[
            int, Field(description="How many orders to return, 1 to 50, e.g. 5; outside is clamped.")
        ] = 10,
    ) -> OrderList:
        """List the newest orders with a given status: order number, customer, amount and creation time.

        Use it for questions such as "which orders are still waiting to ship?" or "show cancelled orders".
        Do not use it for error logs or for changing an order; it only reads.

        Returns {status, limit, count, orders: [{id, customer, amount_cny, status, created_at}]}, newest first.
        """
        if status not in STATUSES:
            raise ToolError(f"unknown status {status!r}; valid statuses: {', '.join(STATUSES)}")
        applied = clamp_limit(limit)
        with foreseen_failures():
            found = orders.by_status(status, applied)
        return OrderList(status=status, limit=applied, count=len(found), orders=found)

    @mcp.resource("file://policy/order-policy.md", name="order-policy", mime_type="text/markdown")
    def order_policy() -> str:
        """Shipping, cancellation, return and large-order rules; attach it when orders are discussed."""
        return ORDER_POLICY

    @mcp.prompt()
    def weekly_report(week: str) -> str:
        """Draft the weekly order report for an ISO week, e.g. week="2026-W44"."""
        try:
            return weekly_report_prompt(week)
        except ValueError as error:
            # A user-triggered template has no model to read an execution error: answer with a protocol error.
            raise MCPError(code=INVALID_PARAMS, message=str(error)) from None

    return mcp


if __name__ == "__main__":
    run(build_server)
