"""The orders server (seed 001): a tool over the order database, the policy resource and the weekly-report prompt."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from servers._wiring import RESOURCE_NOT_FOUND_2025
from servers.orders import MAX_LIMIT
from servers.systems.order_db import STATUSES
from tests.servers_helpers import (
    LabServer,
    assert_tool_error,
    assert_unknown_tool,
    client_fixture,
    query,
    server_fixture,
)

server = server_fixture("orders")
client = client_fixture()
pytestmark = pytest.mark.anyio


def _newest(server: LabServer, status: str, limit: int) -> list[str]:
    rows = query(
        server.data / "orders.sqlite",
        "SELECT id FROM orders WHERE status = ? ORDER BY created_at DESC LIMIT ?",
        status,
        limit,
    )
    return [row[0] for row in rows]


async def test_everything_is_listed(client: Client) -> None:
    (tool,) = (await client.list_tools()).tools
    (resource,) = (await client.list_resources()).resources
    (prompt,) = (await client.list_prompts()).prompts
    assert (tool.name, tool.annotations.read_only_hint) == ("query_orders", True)
    assert {"status", "limit", "count", "orders"} <= set(tool.output_schema["properties"])
    assert (str(resource.uri), resource.mime_type) == ("file://policy/order-policy.md", "text/markdown")
    assert (prompt.name, [argument.name for argument in prompt.arguments]) == ("weekly_report", ["week"])


@pytest.mark.parametrize("status", STATUSES)
async def test_orders_by_status_match_the_database(client: Client, server: LabServer, status: str) -> None:
    result = await client.call_tool("query_orders", {"status": status, "limit": 5})
    listed = result.structured_content
    assert not result.is_error
    assert [order["id"] for order in listed["orders"]] == _newest(server, status, 5)
    assert listed["count"] == len(listed["orders"]) and {order["status"] for order in listed["orders"]} <= {status}


@pytest.mark.parametrize(("asked", "applied"), [(0, 1), (-3, 1), (500, MAX_LIMIT)])
async def test_the_limit_is_clamped(client: Client, server: LabServer, asked: int, applied: int) -> None:
    result = await client.call_tool("query_orders", {"status": "delivered", "limit": asked})
    assert result.structured_content["limit"] == applied
    assert result.structured_content["count"] == len(_newest(server, "delivered", applied))


async def test_an_unknown_status_lists_the_valid_ones(client: Client) -> None:
    result = await client.call_tool("query_orders", {"status": "lost"})
    assert_tool_error(result, "unknown status 'lost'", ", ".join(STATUSES))
    assert not (await client.call_tool("query_orders", {"status": "pending"})).is_error


async def test_a_wrong_argument_type_and_an_unknown_tool_leave_it_serving(client: Client) -> None:
    assert_tool_error(await client.call_tool("query_orders", {"status": "pending", "limit": "many"}), "limit")
    await assert_unknown_tool(client, "query_order")
    assert not (await client.call_tool("query_orders", {"status": "pending"})).is_error


async def test_the_policy_resource_is_markdown(client: Client) -> None:
    (contents,) = (await client.read_resource("file://policy/order-policy.md")).contents
    assert contents.mime_type == "text/markdown" and contents.text.startswith("# Order policy")


async def test_the_weekly_report_prompt_names_the_week_and_the_tool(client: Client) -> None:
    (message,) = (await client.get_prompt("weekly_report", {"week": "2026-W44"})).messages
    assert message.role == "user" and "2026-W44" in message.content.text and "query_orders" in message.content.text
    with pytest.raises(MCPError) as raised:
        await client.get_prompt("weekly_report", {"week": "last week"})
    assert raised.value.code == INVALID_PARAMS and "week must look like 2026-W44" in raised.value.message
    assert (await client.get_prompt("weekly_report", {"week": "2026-W43"})).messages


async def test_an_unknown_prompt_or_resource_is_a_protocol_error_with_the_eras_code(client: Client) -> None:
    with pytest.raises(MCPError) as prompt:
        await client.get_prompt("weekly_reports", {"week": "2026-W44"})
    with pytest.raises(MCPError) as resource:
        await client.read_resource("file://policy/refund-policy.md")
    assert (prompt.value.code, prompt.value.message) == (INVALID_PARAMS, "Unknown prompt: weekly_reports")
    # 2025-11-25 has its own code for a missing resource; 2026-07-28 retired it for -32602 (SEP-2164).
    expected = RESOURCE_NOT_FOUND_2025 if client.protocol_version == "2025-11-25" else INVALID_PARAMS
    assert (resource.value.code, resource.value.data) == (expected, {"uri": "file://policy/refund-policy.md"})
    assert (await client.get_prompt("weekly_report", {"week": "2026-W44"})).messages
