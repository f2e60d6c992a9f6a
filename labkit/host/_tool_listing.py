"""A server's whole tool list, every page of it, and hearing that it changed (notebook 10)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
from mcp import Client
from mcp.client.session import MessageHandlerFnT
from mcp.client.subscriptions import SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp_types import Tool, ToolListChangedNotification

from .._time_limits import scaled
from ..errors import LabError

__all__ = ["ACK_TIMEOUT_S", "MAX_PAGES", "TooManyPages", "every_tool", "on_tools_changed", "tools_changed_stream"]

ACK_TIMEOUT_S = 10.0
"""How long the host waits for a server to acknowledge its `subscriptions/listen` (scaled by LABKIT_TIME_SCALE)."""
MAX_PAGES = 100
"""The most `tools/list` pages the host reads from one server: a server that never stops paging must not hang it."""


class TooManyPages(LabError, ValueError):
    """A server's `tools/list` went on past `MAX_PAGES` pages, or sent a cursor it had sent before.

    `tools` holds what the pages before said."""

    def __init__(self, message: str, tools: list[Tool]) -> None:
        super().__init__(message)
        self.tools = tools


async def every_tool(client: Client, server: str) -> list[Tool]:
    """Every page of `tools/list`, following `nextCursor` until a page has none (notebook 10).

    A cursor is sent back as it came, never built; a server that repeats a cursor or pages on without end is
    refused with `TooManyPages`, naming it, instead of being followed for ever."""
    page = await client.list_tools()
    tools, seen = list(page.tools), set[str]()
    while (cursor := page.next_cursor) is not None:
        if cursor in seen or len(seen) + 1 >= MAX_PAGES:
            why = "sent the same cursor twice" if cursor in seen else f"went on past {MAX_PAGES} pages"
            raise TooManyPages(f"the {server} server's tools/list {why}; the host stopped reading it", tools)
        seen.add(cursor)
        page = await client.list_tools(cursor=cursor)
        tools += page.tools
    return tools


def on_tools_changed(changed: Callable[[], None]) -> MessageHandlerFnT:
    """A `message_handler` for a server at 2025-11-25: its `notifications/tools/list_changed` calls `changed`."""

    async def handle(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed()

    return handle


@asynccontextmanager
async def tools_changed_stream(client: Client, changed: Callable[[], None]) -> AsyncIterator[None]:
    """While the block runs, a 2026-07-28 server that says its tools can change is listened to
    (`subscriptions/listen`); each change calls `changed`. The stream is acknowledged before the block starts, so
    its frames come before the first listing in every run. A server that refuses the stream, or does not acknowledge
    it within `ACK_TIMEOUT_S`, is not listened to; a stream that ends or is lost later ends the listening quietly:
    the connection's own end says why."""
    capabilities = client.server_capabilities.tools
    if client.protocol_version < "2026-07-28" or capabilities is None or not capabilities.list_changed:
        yield
        return
    async with AsyncExitStack() as stack:
        subscription = None
        with anyio.move_on_after(scaled(ACK_TIMEOUT_S)):
            try:
                subscription = await stack.enter_async_context(client.listen(tools_list_changed=True))
            except (MCPError, SubscriptionLost, TimeoutError):
                subscription = None
        if subscription is None:
            yield
            return

        async def relay() -> None:
            try:
                async for _event in subscription:
                    changed()
            except Exception:  # noqa: BLE001 - a lost stream is the connection's to report, not the listener's
                return

        async with anyio.create_task_group() as listening:
            listening.start_soon(relay)
            try:
                yield
            finally:
                listening.cancel_scope.cancel()
