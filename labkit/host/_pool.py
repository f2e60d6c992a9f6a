"""The host's servers: one MCP client each, their tools by name, and a restart for a server that died."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass

from mcp import Client
from mcp_types import Tool

from ..trace import Trace
from ._guards import Guard, LocalTool

__all__ = ["HOST_SERVER", "Route", "ServerPool"]

HOST_SERVER = "host"
"""The pseudo-server name under which host-side tools are routed."""
_SEPARATOR = "__"

Opener = Callable[[], AbstractAsyncContextManager[Client]]


@dataclass(frozen=True)
class Route:
    """Where a name the model may use leads: a server, the tool's name there, and its definition."""

    server: str
    tool_name: str
    tool: Tool


class ServerPool:
    """Opens one client per server, lists their tools through the guards' `on_list`, and routes names (notebook 02).

    With `namespaced=True` the model sees `<server>__<tool>`, so two servers cannot offer the same
    name; otherwise the first server to list a name keeps it.
    """

    def __init__(self, trace: Trace, guards: Sequence[Guard] = (), *, namespaced: bool = False) -> None:
        self.trace = trace
        self.guards = list(guards)
        self.namespaced = namespaced
        self.local: dict[str, LocalTool] = {}
        self._openers: dict[str, Opener] = {}
        self._stacks: dict[str, AsyncExitStack] = {}
        self._clients: dict[str, Client] = {}
        self._routes: dict[str, Route] = {}

    @property
    def servers(self) -> list[str]:
        return list(self._openers)

    def client(self, server: str) -> Client:
        return self._clients[server]

    async def open(self, server: str, opener: Opener) -> None:
        self._openers[server] = opener
        stack = AsyncExitStack()
        try:
            self._clients[server] = await stack.enter_async_context(opener())
        except BaseException:
            await stack.aclose()
            raise
        self._stacks[server] = stack

    async def restart(self, server: str) -> None:
        """Drop a dead connection (its errors are expected and swallowed) and start the server again."""
        stack = self._stacks.pop(server, None)
        if stack is not None:
            try:
                await stack.aclose()
            except Exception:  # the old process is already gone; closing it can only complain
                pass
        self.trace.record("host", "host", "host.restart", f"restarts the {server} server", server=server)
        await self.open(server, self._openers[server])
        await self.refresh()

    async def aclose(self) -> None:
        for server in reversed(list(self._stacks)):
            await self._stacks.pop(server).aclose()

    async def refresh(self) -> None:
        """List every server's tools (the SDK answers from its cache while `ttlMs` lasts), then guard them."""
        routes: dict[str, Route] = {}
        for server, client in self._clients.items():
            tools = (await client.list_tools()).tools
            for guard in self.guards:
                tools = await guard.on_list(server, tools)
            for tool in tools:
                exposed = f"{server}{_SEPARATOR}{tool.name}" if self.namespaced else tool.name
                routes.setdefault(exposed, Route(server, tool.name, tool))
        for name, local in self.local.items():
            routes.setdefault(name, Route(HOST_SERVER, name, local.tool))
        self._routes = routes

    @property
    def tools(self) -> list[Tool]:
        """The tools the model is offered, under the names it must use."""
        return [route.tool.model_copy(update={"name": name}) for name, route in self._routes.items()]

    @property
    def names(self) -> list[str]:
        return list(self._routes)

    def route(self, name: str) -> Route | None:
        """Where a proposed name goes, or None when the host does not list it now: no server sees that call."""
        return self._routes.get(name)
