"""What every lab server promises at the protocol level: cacheable tool lists, and no list changes it never sends."""

from __future__ import annotations

import pytest
from mcp import Client
from mcp.client.caching import CacheConfig

from labkit.host import ServerPool, http_transport, stdio_transport
from labkit.trace import Trace
from servers._wiring import TOOLS_LIST_TTL_MS
from tests.servers_helpers import LabServer, client_fixture, server_fixture

server = server_fixture("orders")  # the one lab server with tools, resources and prompts
client = client_fixture()
pytestmark = pytest.mark.anyio


async def test_no_list_change_is_promised(client: Client) -> None:
    # The lists are fixed when a server starts, so a listChanged: true would promise notifications that never come.
    capabilities = client.server_capabilities
    assert (capabilities.tools.list_changed, capabilities.prompts.list_changed) == (False, False)
    assert (capabilities.resources.list_changed, capabilities.resources.subscribe) == (False, False)


class _Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _tapped(server: LabServer, transport: str, trace: Trace):
    if transport == "http":
        return http_transport(server.url, trace, server=server.name)
    return stdio_transport(server.name, trace, env=server.env, errlog=server.errlog)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_host_lists_tools_again_only_when_the_ttl_has_run_out(server: LabServer, transport: str) -> None:
    trace, clock = Trace(), _Clock()
    pool = ServerPool(trace)

    def listings() -> list[dict]:
        return [e.payload for e in trace if e.payload and e.payload.get("method") == "tools/list" and e.src == "client"]

    try:
        opener = lambda turn: Client(_tapped(server, transport, trace), cache=CacheConfig(clock=clock))  # noqa: E731
        await pool.start({server.name: (server.name, opener)})  # starts, then lists once
        (reply,) = [e.payload for e in trace if e.name == "tools/list" and e.src == "server"] or [None]
        clock.now += TOOLS_LIST_TTL_MS / 1000 - 1
        await pool.refresh()
        inside_ttl = len(listings())
        clock.now += 2
        await pool.refresh()
    finally:
        await pool.aclose()
    assert reply is not None and reply["result"]["ttlMs"] == TOOLS_LIST_TTL_MS == 300_000
    assert inside_ttl == 1, "a listing inside the TTL must be answered from the cache, with no frame"
    assert len(listings()) == 2 and pool.names == ["query_orders"]
