"""Tapped MCP client transports for the three ways the lab reaches a server: stdio, HTTP, memory."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import ExitStack, asynccontextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO, cast

import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from ..trace import TappedTransport, Trace
from ._jsonschema import import_jsonschema_in_background
from ._launch import stdio_params
from ._message_limit import ServerMessageTooLarge
from ._spec import ServerSpec
from ._start_errors import ServerStartError, StartRecord
from ._tempdirs import LabTempDir

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["http_transport", "memory_transport", "sse_transport", "stdio_transport"]

_HTTP_HEADERS = ("mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id", "content-type")


def stdio_transport(
    server: ServerSpec | str,
    trace: Trace,
    *args: str,
    env: Mapping[str, str] | None = None,
    errlog: IO[str] | None = None,
    server_events: Path | None = None,
) -> TappedTransport:
    """A server as a child process over stdio, every frame recorded (notebook 02).

    `server` is a lab server's name (`"logs"`: `servers/logs.py`) or a `ServerSpec` for any command.
    The server's stderr goes to `errlog` (a real file: Jupyter's stderr has no file descriptor); if the
    server exits before the session is over, a `ServerStartError` names it and shows that stderr.
    """
    spec = server if isinstance(server, ServerSpec) else ServerSpec(server, args=args, env=dict(env or {}))
    return TappedTransport(_explained(spec, errlog), trace, server=spec.name, server_events=server_events)


@asynccontextmanager
async def _explained(spec: ServerSpec, errlog: IO[str] | None) -> AsyncIterator[TransportStreams]:
    """The SDK's stdio client; a server that died, or that its supervisor ended, becomes an error that says why."""
    with ExitStack() as files:
        log = errlog if errlog is not None else files.enter_context(tempfile.TemporaryFile(mode="w+"))
        folder = LabTempDir("start")
        files.callback(folder.remove)
        record = StartRecord(spec.name, spec.describe(), folder.path / "status.json", log)
        import_jsonschema_in_background()
        try:
            async with stdio_client(stdio_params(spec, record=record), errlog=cast(TextIO, log)) as streams:
                yield streams
        except Exception as error:
            status = record.status() if _connection_closed(error) else None
            if status is None:
                raise
            if "cut" in status:
                raise ServerMessageTooLarge.from_status(spec.name, status["cut"]) from error
            raise ServerStartError.from_record(record, "before the session ended") from error
        # The supervisor has exited: its note is there if it ended the server for a message too large.
        cut = (record.status(wait_s=0) or {}).get("cut")
        if cut is not None:
            raise ServerMessageTooLarge.from_status(spec.name, cut)


def _connection_closed(error: BaseException) -> bool:
    if isinstance(error, BaseExceptionGroup):
        return any(_connection_closed(e) for e in error.exceptions)
    return isinstance(error, MCPError) and error.error.code == CONNECTION_CLOSED


def http_transport(
    url: str, trace: Trace, *, server: str, server_events: Path | None = None, headers: Mapping[str, str] | None = None,
) -> TappedTransport:
    """A Streamable HTTP endpoint; frames are recorded, and each POST's status and MCP headers too (notebook 02).

    `headers` are sent with every request (e.g. `Authorization` from an `mcpServers` config).
    """
    http = httpx2.AsyncClient(
        headers=dict(headers or {}),
        timeout=httpx2.Timeout(30.0, read=300.0),
        event_hooks={"request": [_on_request(trace, server)], "response": [_on_response(trace, server)]},
    )
    return TappedTransport(_owned_http(url, http), trace, server=server, server_events=server_events)


@asynccontextmanager
async def _owned_http(url: str, http: httpx2.AsyncClient) -> AsyncIterator[TransportStreams]:
    # The SDK leaves a client it was given open; this one is ours, so it is closed with the transport.
    async with http, streamable_http_client(url, http_client=http) as streams:
        yield streams


def sse_transport(url: str, trace: Trace, *, server: str, headers: Mapping[str, str] | None = None) -> TappedTransport:
    """A server on the legacy HTTP+SSE transport (2024-11-05), through the SDK's `sse_client` (notebook 08).

    `type: "sse"` in an editor's config: one GET holds an event stream open, each message is a POST to
    the endpoint the stream names. Frames, and each HTTP request's status, are recorded as for `http_transport`.
    """
    hooks = {"request": [_on_request(trace, server)], "response": [_on_response(trace, server)]}

    def client(headers: dict[str, str] | None = None, timeout: httpx2.Timeout | None = None,
               auth: httpx2.Auth | None = None) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(headers=headers, timeout=timeout or httpx2.Timeout(30.0, read=300.0), auth=auth,
                                  event_hooks=hooks)

    streams = sse_client(url, headers=dict(headers or {}), httpx_client_factory=client)
    return TappedTransport(streams, trace, server=server)


def memory_transport(mcp_server: MCPServer, trace: Trace) -> TappedTransport:
    """An in-process server reached through real JSON-RPC frames over memory streams (notebook 02).

    `Client(mcp_server)` would use the SDK's direct dispatcher, which has no frames to record, so
    this uses the SDK's own in-memory stream transport, which 2.3.0 ships only in a private module.
    """
    from mcp.client._memory import InMemoryTransport

    return TappedTransport(InMemoryTransport(mcp_server), trace, server=mcp_server.name)


def _mcp_headers(headers: Any) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() in _HTTP_HEADERS}


def _on_request(trace: Trace, server: str):
    async def hook(request: httpx2.Request) -> None:
        headers = _mcp_headers(request.headers)
        label = headers.get("mcp-method", request.method)
        trace.record(
            "client", "server", "http.request", f"{request.method} {request.url.path} {label}",
            payload={"method": request.method, "path": request.url.path, "headers": headers},
            server=server, layer="http",
        )

    return hook


def _on_response(trace: Trace, server: str):
    async def hook(response: httpx2.Response) -> None:
        headers = _mcp_headers(response.headers)
        trace.record(
            "server", "client", "http.response",
            f"HTTP {response.status_code} {headers.get('content-type', '')}".strip(),
            payload={"status": response.status_code, "headers": headers},
            server=server, layer="http", status=response.status_code,
        )

    return hook
