"""Wiring every lab server shares: spec errors, quiet logs, sealing keys, the data folder and the runner."""

from __future__ import annotations

import argparse
import inspect
import os
import sys
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

__all__ = [
    "DATA_DIR_ENV", "REQUEST_STATE_KEY_ENV", "REQUEST_STATE_TTL_ENV", "caller_name", "data_dir", "new_server", "run",
]

DATA_DIR_ENV = "LABKIT_DATA_DIR"
REQUEST_STATE_KEY_ENV = "LABKIT_REQUEST_STATE_KEY"
REQUEST_STATE_TTL_ENV = "LABKIT_REQUEST_STATE_TTL"
_MIN_KEY_BYTES = 32
_REPO_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """The folder holding the business systems: `$LABKIT_DATA_DIR`, else `<repo>/data`; created on first use."""
    folder = Path(os.environ.get(DATA_DIR_ENV) or _REPO_ROOT / "data")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def caller_name(ctx: Context) -> str:
    """The name the client declared (`clientInfo.name`) in either protocol era.

    Self-declared, not authenticated: good enough to show per-caller policy in the lab, not in production.
    """
    params = ctx.session.client_params
    return params.client_info.name if params is not None else "anonymous"


class _LabServer(MCPServer):
    """Tool descriptions are the docstrings without their indentation, which Python 3.11 keeps."""

    def tool(self, *args: Any, **kwargs: Any) -> Callable[[Callable[..., Any]], Any]:
        register = super().tool

        def decorate(function: Callable[..., Any]) -> Any:
            kwargs.setdefault("description", inspect.cleandoc(function.__doc__ or ""))
            return register(*args, **kwargs)(function)

        return decorate


def new_server(name: str, instructions: str) -> MCPServer:
    """An `MCPServer` with the lab's policies: -32602 for unknown tools, WARNING logs, shared sealing keys."""
    server = _LabServer(
        name,
        version=version("mcp-teaching-lab"),
        instructions=instructions,
        log_level="WARNING",
        request_state_security=_request_state_security(),
    )
    server.middleware.append(_unknown_tool_is_protocol_error(server))
    return server


def run(
    build_server: Callable[..., MCPServer],
    add_flags: Callable[[argparse.ArgumentParser], None] | None = None,
) -> None:
    """Serve over stdio, or Streamable HTTP on 127.0.0.1 with `--http --port N`.

    Flags added by `add_flags` are passed to `build_server` as keyword arguments.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (default 8000)")
    if add_flags is not None:
        add_flags(parser)
    options = vars(parser.parse_args())
    http, port = options.pop("http"), options.pop("port")
    server = build_server(**options)
    if http:
        server.run("streamable-http", host="127.0.0.1", port=port)
    else:
        server.run()
    # Serving is over and everything is flushed; skipping interpreter teardown saves most of a second per stop.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _request_state_security() -> RequestStateSecurity | None:
    """A shared key lets processes accept each other's `requestState`; None keeps the SDK's per-process key.

    `LABKIT_REQUEST_STATE_TTL` (seconds, default the SDK's 600) shortens each round's lifetime (notebook 04).
    """
    key = os.environ.get(REQUEST_STATE_KEY_ENV)
    ttl = float(os.environ.get(REQUEST_STATE_TTL_ENV) or 600.0)
    if key is None:
        return RequestStateSecurity.ephemeral(ttl=ttl) if REQUEST_STATE_TTL_ENV in os.environ else None
    if len(key.encode()) < _MIN_KEY_BYTES:
        raise ValueError(
            f"{REQUEST_STATE_KEY_ENV} must be at least {_MIN_KEY_BYTES} bytes, got {len(key.encode())}; "
            'make one with: python -c "import secrets; print(secrets.token_urlsafe(32))"'
        )
    return RequestStateSecurity(keys=[key.encode()], ttl=ttl)


def _unknown_tool_is_protocol_error(server: MCPServer) -> ServerMiddleware[Any]:
    # The spec lists an unknown tool as a protocol error (-32602); MCPServer alone answers isError: true.
    async def check_tool_name(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "tools/call":
            name = (ctx.params or {}).get("name")
            if name not in {tool.name for tool in await server.list_tools()}:
                raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        return await call_next(ctx)

    return check_tool_name
