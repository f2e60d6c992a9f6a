"""Wiring every lab server shares: spec errors, cache hints, quiet logs, sealing keys, the data folder, the runner."""

from __future__ import annotations

import argparse
import hmac
import inspect
import json
import os
import socket
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from mcp.server.caching import CacheHint
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.extension import Extension
from mcp.server.mcpserver import Context, MCPServer, RequestStateSecurity
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolResult,
    ClientCapabilities,
    ElicitationCapability,
    FormElicitationCapability,
    MissingRequiredClientCapabilityErrorData,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from labkit.server_contract import (
    DATA_DIR_ENV,
    HOST_SECRET_ENV,
    MAX_RESULT_BYTES_ENV,
    REQUEST_STATE_KEY_ENV,
    REQUEST_STATE_TTL_ENV,
)
from servers.i18n import _
from servers.systems._sqlite import StoreUnavailable

from ._protected import RESOURCE_URL_ENV, auth_options, scoped_tools

__all__ = [
    "DATA_DIR_ENV",
    "HOST_SECRET_ENV",
    "HOST_SECRET_PARAM",
    "MAX_RESULT_BYTES",
    "MAX_RESULT_BYTES_ENV",
    "REQUEST_STATE_KEY_ENV",
    "REQUEST_STATE_TTL_ENV",
    "RESOURCE_NOT_FOUND_2025",
    "TOOLS_LIST_TTL_MS",
    "add_http_flags",
    "caller_name",
    "data_dir",
    "declares_form_elicitation",
    "foreseen_failures",
    "http_port",
    "missing_form_elicitation",
    "new_server",
    "run",
    "serve_http",
]

HOST_SECRET_PARAM = "host_secret"
RESOURCE_NOT_FOUND_2025 = -32002
"""2025-11-25's own code for a missing resource; 2026-07-28 retired it in favour of -32602 (SEP-2164)."""
TOOLS_LIST_TTL_MS = 300_000
MAX_RESULT_BYTES = 4 * 1024 * 1024
"""The most a lab server sends as one tool result (JSON bytes), unless `LABKIT_MAX_RESULT_BYTES` says otherwise."""
"""How long a client may reuse a `tools/list` result: the tool lists never change while a server runs."""
_MIN_KEY_BYTES = 32
_REPO_ROOT = Path(__file__).resolve().parent.parent


def data_dir() -> Path:
    """Where the business systems live: `$LABKIT_DATA_DIR`, else `<repo>/data`; made on first use (notebook 01).

    Made for its owner alone (0700): on a machine shared by a room, another learner cannot read its data, whatever
    the folders above it allow.
    """
    folder = Path(os.environ.get(DATA_DIR_ENV) or _REPO_ROOT / "data")
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return folder


@contextmanager
def foreseen_failures() -> Iterator[None]:
    """A business system the server cannot read (damaged, locked, on a full disk) as a ToolError in plain words: the
    model and the learner read why, instead of the SDK's bare "Error executing tool" for a crash."""
    try:
        yield
    except StoreUnavailable as error:
        raise ToolError(str(error)) from None


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


def declares_form_elicitation(ctx: Context) -> bool:
    """Whether this request's client can answer a form question (a bare `elicitation: {}` means form)."""
    capabilities = ctx.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


def missing_form_elicitation(question: str) -> MCPError:
    """The 2026-07-28 error for a request that needs an answer the client declared it cannot give (-32021)."""
    required = ClientCapabilities(elicitation=ElicitationCapability(form=FormElicitationCapability()))
    data = MissingRequiredClientCapabilityErrorData(required_capabilities=required)
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=_(
            "the client did not declare the form elicitation capability this call needs to ask: {question}"
        ).format(question=question),
        data=data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


def new_server(
    name: str, instructions: str, *, tools_change: bool = False, extensions: Sequence[Extension] = ()
) -> MCPServer:
    """An `MCPServer` with the lab's policies: the spec's error codes, cacheable tool lists, WARNING logs,
    shared sealing keys, and no list-change subscriptions (the lists never change, so none are promised).

    A server whose tools do change (`tools_change=True`) offers `subscriptions/listen` instead, and its
    lists are not to be cached: a client learns of a change from the listen stream, not from a timer.
    `extensions` are the SDK's opt-in extensions the server serves (the archive's Tasks, notebook 10).
    """
    server = _LabServer(
        name,
        version=version("mcp-teaching-lab"),
        instructions=instructions,
        log_level="WARNING",
        request_state_security=_request_state_security(),
        cache_hints=None if tools_change else {"tools/list": CacheHint(ttl_ms=TOOLS_LIST_TTL_MS)},
        subscriptions=None if tools_change else False,
        extensions=extensions,
        **auth_options(),
    )
    if server.settings.auth is not None:
        server.middleware.append(scoped_tools(server))
    server.middleware.append(_spec_error_codes(server))
    server.middleware.append(_result_cap)
    return server


def run(
    build_server: Callable[..., MCPServer],
    add_flags: Callable[[argparse.ArgumentParser], None] | None = None,
) -> None:
    """Serve over stdio, or Streamable HTTP on 127.0.0.1 with `--http --port N` (or `--http --fd N`: `add_http_flags`).

    Flags added by `add_flags` are passed to `build_server` as keyword arguments.
    """
    parser = argparse.ArgumentParser()
    add_http_flags(parser)
    if add_flags is not None:
        add_flags(parser)
    options = vars(parser.parse_args())
    http, port, fd = options.pop("http"), http_port(options.pop("port"), options["fd"]), options.pop("fd")
    if http:
        os.environ.setdefault(RESOURCE_URL_ENV, f"http://127.0.0.1:{port}/mcp")  # the audience its tokens must name
    # Popped before any tool runs: a tool that reads its own environment does not find it.
    secret = os.environ.pop(HOST_SECRET_ENV, None)
    server = build_server(**options)
    if http:
        app: ASGIApp = server.streamable_http_app(host="127.0.0.1")
        serve_http(_HostOnly(app, secret) if secret else app, port, fd, server.settings.log_level)
    else:
        server.run()
    # Serving is over and everything is flushed; skipping interpreter teardown saves most of a second per stop.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def add_http_flags(parser: argparse.ArgumentParser, default_port: int = 8000) -> None:
    """`--http`, and where to serve it: `--port N` (a person starting a server), or `--fd N`, a listening socket its
    host binds, holds and passes (`labkit.processes.HeldPort`: the port stays the host's while it may call it)."""
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=default_port, help=f"HTTP port (default {default_port})")
    parser.add_argument("--fd", type=int, help="serve HTTP on this listening socket instead (how the host starts it)")


def http_port(port: int, fd: int | None) -> int:
    """The port served: that of the socket `fd`, if given, else `port`."""
    if fd is None:
        return port
    with socket.socket(fileno=os.dup(fd)) as listening:
        return int(listening.getsockname()[1])


def serve_http(
    app: ASGIApp, port: int, fd: int | None, log_level: str, certificate: tuple[str, str] | None = None
) -> None:
    """Serve `app` with uvicorn, as the SDK does, on 127.0.0.1:`port` or on the listening socket `fd`; over HTTPS
    when `certificate` names a certificate file and its key file."""
    import uvicorn  # as the SDK does: a stdio server never pays for importing it

    cert, key = certificate or (None, None)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level=log_level.lower(), ssl_certfile=cert, ssl_keyfile=key
    )
    uvicorn.Server(config).run(sockets=[socket.socket(fileno=fd)] if fd is not None else None)


class _HostOnly:
    """The server's HTTP app, answering only requests whose URL carries its host's secret.

    On a machine whose learners share one loopback interface (a hub), 127.0.0.1 says nothing about who is calling:
    any learner's process could reach any other's server. The secret is given to this process alone, by the
    host that started it, so no other user's process can know it, whatever it sends.
    """

    def __init__(self, app: ASGIApp, secret: str) -> None:
        self.app = app
        self.secret = secret

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = parse_qs(scope["query_string"].decode("latin-1")).get(HOST_SECRET_PARAM, [""])[0]
            if not hmac.compare_digest(given.encode(), self.secret.encode()):
                refusal = PlainTextResponse(
                    "This server answers only the host that started it: "
                    f"the request's URL lacks its {HOST_SECRET_PARAM}.",
                    status_code=403,
                )
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


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


def _spec_error_codes(server: MCPServer) -> ServerMiddleware[Any]:
    """Every error code the spec names and `MCPServer` alone answers differently, in one place.

    - unknown tool or prompt: -32602 in both eras (MCPServer: isError: true; -32603 or code 0 for prompts);
    - unknown resource: -32002 at 2025-11-25, -32602 at 2026-07-28 (MCPServer: -32602 in both);
    - `inputResponses: null`: -32602 (MCPServer treats it as a first round and asks again).
    """

    async def check(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params or {}
        if "inputResponses" in params and params["inputResponses"] is None:
            raise MCPError(code=INVALID_PARAMS, message="inputResponses must be an object of answers, not null")
        if ctx.method == "tools/call" and params.get("name") not in {tool.name for tool in await server.list_tools()}:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {params.get('name')}")
        if ctx.method == "prompts/get" and params.get("name") not in {p.name for p in await server.list_prompts()}:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {params.get('name')}")
        if ctx.method == "resources/read" and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            try:
                return await call_next(ctx)
            except MCPError as error:
                # MCPServer marks "no resource or template matches" as -32602 with data {"uri"}, and only that.
                not_found = {"uri": params.get("uri")}
                if error.code == INVALID_PARAMS and error.data == not_found:
                    raise MCPError(code=RESOURCE_NOT_FOUND_2025, message="Resource not found", data=not_found) from None
                raise
        return await call_next(ctx)

    return check


def _max_result_bytes() -> int:
    raw = os.environ.get(MAX_RESULT_BYTES_ENV, "")
    if not raw:
        return MAX_RESULT_BYTES
    if not raw.isdigit() or int(raw) == 0:
        sys.exit(f"{MAX_RESULT_BYTES_ENV} must be a whole number of bytes above 0, not {raw!r}")
    return int(raw)


async def _result_cap(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
    """A tool result larger than the cap is replaced by an `isError` text naming the cap and the size.

    Sent whole, a result of tens of MiB takes the client seconds to read and the model's context
    window cannot hold it anyway; the error tells the model to ask for less.
    """
    result = await call_next(ctx)
    if ctx.method != "tools/call" or not isinstance(result, dict):
        return result
    size = len(json.dumps(result, ensure_ascii=False).encode())
    cap = _max_result_bytes()
    if size <= cap:
        return result
    tool = (ctx.params or {}).get("name")
    text = (
        f"The result of {tool} was {size:,} bytes, over this server's cap of {cap:,} bytes "
        f"({MAX_RESULT_BYTES_ENV}); it was not sent. Ask for less (a narrower range, fewer rows)."
    )
    capped = CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
    return capped.model_dump(by_alias=True, mode="json", exclude_none=True)
