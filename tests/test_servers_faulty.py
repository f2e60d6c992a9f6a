"""The faulty server breaks on purpose: a hang, a crash, a flood and a raise, each seen by a real client."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.servers_helpers import LabServer, assert_tool_error, client_fixture, server_fixture, text_of

server = server_fixture("faulty")
client = client_fixture()
pytestmark = pytest.mark.anyio


async def test_a_hang_ends_in_a_client_timeout_and_the_server_keeps_serving(client: Client) -> None:
    with pytest.raises(MCPError) as raised:
        await client.call_tool("sleep_for", {"seconds": 30}, read_timeout_seconds=0.3)
    assert "timed out" in raised.value.message
    assert text_of(await client.call_tool("sleep_for", {"seconds": 0})) == "slept 0 s"


async def test_a_huge_result_arrives_whole(client: Client) -> None:
    result = await client.call_tool("huge_result", {"kilobytes": 300})
    assert len(text_of(result)) == 300 * 1024


async def test_a_plain_exception_is_an_execution_error_whose_text_stays_on_the_server(
    client: Client, server: LabServer
) -> None:
    result = await client.call_tool("raise_error", {"message": "disk quota exceeded on /srv"})
    assert_tool_error(result, "Error executing tool raise_error")
    assert "disk quota" not in text_of(result)
    assert "disk quota exceeded on /srv" in server.log()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_crash_closes_the_stdio_connection(server: LabServer, mode: str) -> None:
    async with server.client("stdio", mode) as crashing:
        with pytest.raises(MCPError) as raised:
            await crashing.call_tool("crash_now", {})
    assert raised.value.message == "Connection closed"
    assert "crash_now called" in server.log()
