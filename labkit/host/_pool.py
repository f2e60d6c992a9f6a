"""The host's servers: one MCP client each, their tools by name, and a restart for a server that died."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, Tool

from .._i18n import _
from .._time_limits import scaled
from ..processes import (
    Deadline,
    HeldPort,
    ServerEnd,
    ServerMessageTooLarge,
    ServerProcess,
    ServerStartError,
    moving_deadline,
)
from ..trace import Kind, Meta, Trace
from ._connection import Connection, Opener, TaskHome
from ._guards import Guard, LocalTool
from ._tool_listing import TooManyPages, every_tool

__all__ = ["HOST_SERVER", "Route", "ServerPool", "namespaced_name"]

HOST_SERVER = "host"
"""The pseudo-server name under which host-side tools are routed."""
_SEPARATOR = "__"
_LATE_S = 5.0


@dataclass(frozen=True)
class Route:
    """Where a name the model may use leads: a server, the tool's name there, and its definition."""

    server: str
    tool_name: str
    tool: Tool


def namespaced_name(server: str, tool: str) -> str:
    """The name a namespacing host offers the model for `server`'s `tool`: `<server>__<tool>` (notebook 07)."""
    return f"{server}{_SEPARATOR}{tool}"


class ServerPool:
    """Opens one client per server, lists their tools through the guards' `on_list`, and routes names (notebook 02).

    With `namespaced=True` the model sees `<server>__<tool>`, so two servers cannot offer the same
    name; otherwise the first server to list a name keeps it.
    """

    def __init__(
        self,
        trace: Trace,
        guards: Sequence[Guard] = (),
        *,
        namespaced: bool = False,
        start_timeout: float = 30.0,
    ) -> None:
        self.trace = trace
        self.guards = list(guards)
        self.namespaced = namespaced
        self.start_timeout = start_timeout
        self.local: dict[str, LocalTool] = {}
        self._connections: dict[str, Connection] = {}
        self._commands: dict[str, str] = {}
        self._home: TaskHome | None = None
        self._routes: dict[str, Route] = {}
        self.stderr: dict[str, IO[str]] = {}
        """Each server's stderr file, kept across restarts: a start that times out shows its end."""
        self.ports: dict[str, HeldPort] = {}
        """Each HTTP server's port, held by the host across restarts: its URL stays its own until the host closes."""
        self.processes: dict[str, ServerProcess] = {}
        """Each server the host started, its last process: the one a call's limit watches (none: a server at a URL)."""
        self.ends: dict[str, ServerEnd] = {}
        """How each server's last process ended, once its connection closed: a restart's account says it."""
        self.unavailable: dict[str, Exception] = {}
        """Servers that could not be started, each with its error: the host goes on without them (notebook 07)."""
        self.changed: set[str] = set()
        """Servers that said their tool list changed since the host last listed it (notebook 10)."""

    @property
    def servers(self) -> list[str]:
        return list(self._connections)

    def client(self, server: str) -> Client:
        return self._connections[server].client

    def process_tree(self, server: str) -> tuple[int, ...]:
        """The process id of `server` (its descendants are its too): what tells whether it works or hangs during a
        call; none for a server at a URL, which runs elsewhere."""
        process = self.processes.get(server)
        pid = process.pid if process is not None else None
        return (pid,) if pid is not None else ()

    async def start(self, openers: Mapping[str, tuple[str, Opener]]) -> None:
        """Start every server at once, each connection in its own task, then list their tools (notebook 02).

        `openers` maps a server's name to (its command line, how to open it). The servers start
        concurrently, but each one's first frame waits for the one before, so the trace reads in order.
        Start-up, from spawn to the first listing, ends within `start_timeout` (scaled by `LABKIT_TIME_SCALE`). A
        server that fails to start or to answer in time is set aside in `unavailable` (the trace says why) and the
        others go on; only when none started is its `ServerStartError` raised, naming the server and the request it
        was waiting for. The listing waits on a deadline moved on while the host and its servers wait for a CPU.
        """
        self._home = self._home or TaskHome()
        since = len(self.trace)
        previous: Connection | None = None
        for server, (command, opener) in openers.items():
            turn = previous.settled if previous is not None else _nothing_to_wait_for
            connection = Connection(server, opener, turn)
            self._connections[server], self._commands[server] = connection, command
            self._home.spawn(connection.hold)
            previous = connection
        await self._opened_and_listed(list(openers), since)

    async def _opened_and_listed(self, servers: list[str], since: int) -> None:
        failed: dict[str, Exception] = {}
        start = Deadline(scaled(self.start_timeout))  # one limit for all the starts, moved on like each one's
        for server in servers:
            async with moving_deadline(self._left(start)) as deadline:
                try:
                    await self._connections[server].opened()
                except Exception as error:  # noqa: BLE001  any cause: the server is set aside, and why is kept
                    failed[server] = error
            if deadline.scope.cancelled_caught:
                failed[server] = self._timed_out([server], since, deadline.busy_note())
            if server in failed:
                await self._connections[server].close()  # its successor's turn waits for it to settle
        if failed and len(failed) == len(servers):
            raise next(iter(failed.values()))
        for server, reason in failed.items():
            self._set_aside(server, reason)
        started = [server for server in servers if server not in failed]
        await self._within_start_timeout(started, since, self.refresh())
        if servers and not any(server in self._connections for server in servers):  # each listing ended its own
            raise self.unavailable[servers[0]]

    def _left(self, start: Deadline) -> float:
        """The time left of the `start`'s limit, moved on as far as the machine kept its processes waiting; at least
        a few seconds for a step whose turn came late (one before it hung or failed), since its server is running
        already."""
        left = start.began + start.limit + start.credit() - time.monotonic()
        return max(left, min(scaled(self.start_timeout), _LATE_S))

    def _set_aside(self, server: str, error: Exception) -> None:
        """Degrade, don't fail: the server's tools are not offered, and the trace tells the person why."""
        del self._connections[server]
        self.unavailable[server] = error
        first_line = str(error).splitlines()[0] if str(error) else type(error).__name__
        self.trace.record(
            "host",
            "user",
            Kind.HOST_UNAVAILABLE,
            _("the {server} server is unavailable; the host goes on without it: {why}").format(
                server=server, why=first_line
            ),
            server=server,
            payload={"error": str(error)},
        )

    async def _within_start_timeout(self, servers: list[str], since: int, work) -> None:
        async with moving_deadline(scaled(self.start_timeout)) as deadline:
            await work
        if deadline.scope.cancelled_caught:
            raise self._timed_out(servers, since, deadline.busy_note())

    def _timed_out(self, servers: list[str], since: int, busy: str) -> ServerStartError:
        """The first server still waiting, and for what: its request without a reply (initialize, tools/list...)."""
        unanswered: dict[tuple[Any, Any], Any] = {}
        for event in list(self.trace)[since:]:
            key = (event.meta.get(Meta.SERVER), event.ref)
            if event.kind == Kind.JSONRPC_REQUEST and event.src == "client":
                unanswered[key] = event.meta.get(Meta.METHOD)
            elif event.kind in (Kind.JSONRPC_RESPONSE, Kind.JSONRPC_ERROR) and event.dst == "client":
                unanswered.pop(key, None)
        waiting = {server: method for (server, _), method in unanswered.items()}
        server = next((s for s in servers if s in waiting or not self._connections[s].is_open), servers[-1])
        method = waiting.get(server)
        limit = scaled(self.start_timeout)
        stage = f"no reply to {method} within {limit:g} s" if method is not None else f"not started within {limit:g} s"
        if busy:
            stage += f". {busy.rstrip('.')}"
        error = ServerStartError(server, self._commands[server], stage, None, "", method=method)
        # A server that did not answer in time is still running: what it wrote so far says why.
        return error.with_stderr(self.stderr[server]) if server in self.stderr else error

    async def restart(self, server: str) -> None:
        """Close the dead connection (its task drops its complaints), start the server again and list again."""
        self.trace.record(
            "host", "host", Kind.HOST_RESTART, _("restarts the {server} server").format(server=server), server=server
        )
        since = len(self.trace)

        async def reopened() -> None:
            await self._connections[server].reopen()
            await self.refresh()

        await self._within_start_timeout([server], since, reopened())

    def too_large(self, server: str) -> ServerMessageTooLarge | None:
        """The message over the host's limit that ended the server's last connection, if that is why it ended."""
        return _too_large_in(self._connections[server].ended_by)

    async def aclose(self) -> None:
        """Close every connection, the last started first; one that fails to close does not stop the others."""
        try:
            for connection in reversed(list(self._connections.values())):
                await connection.close()
        finally:
            if self._home is not None:
                await self._home.aclose()

    def tools_changed(self, server: str) -> None:
        """A server said its tool list changed: the host lists again, through the guards, before the next turn."""
        if server not in self.changed:
            self.changed.add(server)
            self.trace.record(
                "host",
                "host",
                Kind.HOST_NOTE,
                _("the {server} server says its tools changed: the host lists them again before the next turn").format(
                    server=server
                ),
                server=server,
            )

    async def refresh_changed(self) -> None:
        """List again if a server said its tools changed since the last listing (notebook 10)."""
        if self.changed:
            await self.refresh()

    async def refresh(self) -> None:
        """List every server's tools, every page (the SDK answers from its cache while `ttlMs` lasts), then guard
        them; the pins are checked on every listing, whether or not a server said anything changed."""
        routes: dict[str, Route] = {}
        self.changed.clear()
        ended: dict[str, MCPError] = {}
        for server, connection in self._connections.items():
            try:
                tools = await every_tool(connection.client, server)
            except TooManyPages as refused:
                self.trace.record("host", "host", Kind.HOST_ERROR, str(refused), server=server)
                tools = refused.tools
            except MCPError as error:
                if error.error.code != CONNECTION_CLOSED:
                    raise
                ended[server] = error  # its listing ended its connection (a message over the limit): set aside below
                continue
            for guard in self.guards:
                tools = await guard.on_list(server, tools)
            for tool in tools:
                exposed = namespaced_name(server, tool.name) if self.namespaced else tool.name
                routes.setdefault(exposed, Route(server, tool.name, tool))
        for name, local in self.local.items():
            routes.setdefault(name, Route(HOST_SERVER, name, local.tool))
        self._routes = routes
        for server, closed in ended.items():
            connection = self._connections[server]
            await connection.close()  # the transport's account of the end (ServerMessageTooLarge...) is then known
            self._set_aside(server, connection.ended_by or closed)

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


async def _nothing_to_wait_for() -> None:
    return None


def _too_large_in(error: BaseException | None) -> ServerMessageTooLarge | None:
    """`error` itself, or found inside the exception groups the SDK's task groups wrap it in."""
    if isinstance(error, ServerMessageTooLarge):
        return error
    if isinstance(error, BaseExceptionGroup):
        return next((found for e in error.exceptions if (found := _too_large_in(e)) is not None), None)
    return None
