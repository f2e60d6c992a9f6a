"""The plans server (seed 003): family allows 6 accounts, personal 3, anything else is a clear execution error."""

from __future__ import annotations

import pytest
from mcp import Client

from servers.plans import PLANS
from tests.servers_helpers import assert_tool_error, assert_unknown_tool, client_fixture, server_fixture

server = server_fixture("plans")
client = client_fixture()
pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(("plan", "accounts"), [("family", 6), ("personal", 3)])
async def test_each_plan_answers_with_its_account_limit(client: Client, plan: str, accounts: int) -> None:
    result = await client.call_tool("get_plan", {"plan": plan})
    assert not result.is_error
    assert result.structured_content == PLANS[plan].model_dump(mode="json")
    assert result.structured_content["max_accounts"] == accounts


@pytest.mark.parametrize("arguments", [{"plan": "enterprise"}, {"plan": "Family "}, {"plan": 6}, {}])
async def test_anything_else_is_an_execution_error_and_it_keeps_serving(client: Client, arguments: dict) -> None:
    result = await client.call_tool("get_plan", arguments)
    assert_tool_error(result, "plan")
    if isinstance(arguments.get("plan"), str):
        assert_tool_error(result, "valid plans: family, personal")
    assert (await client.call_tool("get_plan", {"plan": "family"})).structured_content["max_accounts"] == 6


async def test_an_unknown_tool_is_a_protocol_error(client: Client) -> None:
    await assert_unknown_tool(client, "set_plan")
    assert not (await client.call_tool("get_plan", {"plan": "personal"})).is_error
