"""Tapped MCP client transports for the three ways the lab reaches a server: stdio, HTTP, memory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO, cast

import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from .._i18n import _
from .._notebook_errors import interrupted
from ..processes import ServerEnd, ServerProcess, ServerSpec, direct_to_loopback, stdio_params
from ..trace import TappedTransport, Trace
from ._http_record import HttpRecorder
from ._jsonschema import import_jsonschema_in_background
from ._server_output import naming_stray_lines

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["http_transport", "memory_transport", "sse_transport", "stdio_transport"]


def stdio_transport(
    server: ServerSpec | str,
    trace: Trace,
    *args: str,
    env: Mapping[str, str] | None = None,
    errlog: IO[str] | None = None,
    server_events: Path | None = None,
    on_end: Callable[[ServerEnd], None] | None = None,
    on_start: Callable[[ServerProcess], None] | None = None,
) -> TappedTransport:
    """A server as a child process over stdio, every frame recorded (notebook 02).

    `server` is a lab server's name (`"logs"`: `servers/logs.py`) or a `ServerSpec` for any command.
    The server's stderr goes to `errlog` (a real file: Jupyter's stderr has no file descriptor). If the server
    exits before the session is over, an error says how (`ServerEnd.as_error`): `ServerStartError` if it never
    answered, `ServerEnded` if it had, `ServerMessageTooLarge` if its supervisor ended it; each shows that stderr.
    `on_end` is given how the process ended, once the session is over; `on_start` the process as it is started (its
    `pid` once the supervisor has started it).
    """
    spec = server if isinstance(server, ServerSpec) else ServerSpec(server, args=args, env=dict(env or {}))
    explained = _explained(spec, errlog, trace, on_end, on_start)
    return TappedTransport(explained, trace, server=spec.name, server_events=server_events)


@asynccontextmanager
async def _explained(
    spec: ServerSpec,
    errlog: IO[str] | None,
    trace: Trace,
    on_end: Callable[[ServerEnd], None] | None,
    on_start: Callable[[ServerProcess], None] | None,
) -> AsyncIterator[TransportStreams]:
    """The SDK's stdio client; a server that died, or that its supervisor ended, becomes an error that says why."""
    with ServerProcess(spec, errlog) as process:
        if on_start is not None:
            on_start(process)
        import_jsonschema_in_background()
        try:
            with naming_stray_lines(trace, spec.name):
                params = stdio_params(spec, process=process)
                async with stdio_client(params, errlog=cast(TextIO, process.errlog)) as streams:
                    try:
                        yield streams
                    except asyncio.CancelledError:
                        # In a notebook, an interrupt: said in one line (unless what it ended said so first).
                        interrupted(
                            _(
                                "Interrupted while the session with the {server} server was open: the session was "
                                "closed and the server stopped. Run the cell again to start over."
                            ).format(server=spec.name)
                        )
                        raise
        except Exception as error:
            end = process.end() if _connection_closed(error) else None
            if end is not None and on_end is not None:
                on_end(end)
            if end is None or end.why == "unknown":
                raise
            raise end.as_error("before the session ended") from error
        # The supervisor has exited: its note is there if it ended the server for a message too large.
        end = process.end(wait_s=0)
        if on_end is not None:
            on_end(end)
        if end.why == "too large":
            raise end.as_error("before the session ended")


def _connection_closed(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return any(_connection_closed(e) for e in error.exceptions)
    return isinstance(error, MCPError) and error.error.code == CONNECTION_CLOSED


def http_transport(
    url: str,
    trace: Trace,
    *,
    server: str,
    server_events: Path | None = None,
    headers: Mapping[str, str] | None = None,
    recorder: HttpRecorder | None = None,
    auth: httpx2.Auth | None = None,
) -> TappedTransport:
    """A Streamable HTTP endpoint; frames are recorded, and each request's status and MCP headers too (notebook 02).

    `headers` are sent with every request (e.g. `Authorization` from an `mcpServers` config); the
    trace shows `Authorization` redacted. A failed request (HTTP 4xx/5xx) shows in the default table
    with its status, the server's `WWW-Authenticate` and body; an error reply the SDK makes up from it
    is recorded as the client's (`HttpRecorder`).
    """
    recorder = recorder or HttpRecorder(trace, server)
    http = httpx2.AsyncClient(
        headers=dict(headers or {}),
        auth=auth,
        timeout=httpx2.Timeout(30.0, read=300.0),
        event_hooks=recorder.hooks(),
        **direct_to_loopback(url),
    )
    return TappedTransport(
        _owned_http(url, http), trace, server=server, server_events=server_events, made_up=recorder.made_up
    )


@asynccontextmanager
async def _owned_http(url: str, http: httpx2.AsyncClient) -> AsyncIterator[TransportStreams]:
    # The SDK leaves a client it was given open; this one is ours, so it is closed with the transport.
    async with http, streamable_http_client(url, http_client=http) as streams:
        yield streams


def sse_transport(
    url: str,
    trace: Trace,
    *,
    server: str,
    headers: Mapping[str, str] | None = None,
    recorder: HttpRecorder | None = None,
) -> TappedTransport:
    """A server on the legacy HTTP+SSE transport (2024-11-05), through the SDK's `sse_client` (notebook 08).

    `type: "sse"` in an editor's config: one GET holds an event stream open, each message is a POST to
    the endpoint the stream names. Frames, and each HTTP request's status, are recorded as for `http_transport`.
    """
    recorder = recorder or HttpRecorder(trace, server)

    def client(
        headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None, auth: httpx2.Auth | None = None
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(
            headers=headers,
            timeout=timeout or httpx2.Timeout(30.0, read=300.0),
            auth=auth,
            event_hooks=recorder.hooks(),
            **direct_to_loopback(url),
        )

    streams = sse_client(url, headers=dict(headers or {}), httpx_client_factory=client)
    return TappedTransport(streams, trace, server=server, made_up=recorder.made_up)


def memory_transport(mcp_server: MCPServer, trace: Trace) -> TappedTransport:
    """An in-process server reached through real JSON-RPC frames over memory streams (notebook 02).

    `Client(mcp_server)` would use the SDK's direct dispatcher, which has no frames to record, so
    this uses the SDK's own in-memory stream transport, which 2.3.0 ships only in a private module.
    """
    from mcp.client._memory import InMemoryTransport

    return TappedTransport(InMemoryTransport(mcp_server), trace, server=mcp_server.name)
