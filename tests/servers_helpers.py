"""Shared pieces of the server tests: real server processes, real SDK clients, both transports and both eras."""

from __future__ import annotations

import json
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import closing
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, Implementation

from labkit.host import http_server, stdio_params

__all__ = [
    "CONNECTIONS",
    "ERA",
    "TIME_SERVER",
    "TRANSPORT_MODES",
    "LabServer",
    "assert_tool_error",
    "assert_unknown_tool",
    "client_fixture",
    "driven_by_hand",
    "query",
    "raw_modern_request",
    "server_fixture",
    "text_of",
]

TRANSPORT_MODES = list(product(("stdio", "http"), ("auto", "legacy")))
CONNECTIONS = [pytest.param((transport, mode), id=f"{transport}-{mode}") for transport, mode in TRANSPORT_MODES]
ERA = {"auto": "2026-07-28", "legacy": "2025-11-25"}
# The real mcp-server-time from PyPI (pinned): on PATH, or beside this Python when its venv is not activated.
TIME_SERVER = shutil.which("mcp-server-time") or str(Path(sys.executable).with_name("mcp-server-time"))


@dataclass
class LabServer:
    """One `servers.<name>` HTTP process for a test module; stdio clients start their own process."""

    name: str
    url: str
    data: Path
    args: tuple[str, ...]
    env: dict[str, str]
    errlog: TextIO

    def client(self, transport: str, mode: str, *, caller: str = "lab-tests", **options: Any) -> Client:
        """A real SDK client; `caller` becomes clientInfo.name, which the servers use as the caller's identity."""
        info = Implementation(name=caller, version="0")
        if transport == "http":
            return Client(self.url, mode=mode, client_info=info, **options)
        params = stdio_params(self.name, *self.args, env=self.env)
        return Client(stdio_client(params, errlog=self.errlog), mode=mode, client_info=info, **options)

    def log(self) -> str:
        self.errlog.seek(0)
        return self.errlog.read()


def server_fixture(name: str, *args: str, env: Mapping[str, str] | None = None, fixture_name: str = "server") -> Any:
    """A module-scoped fixture: `servers.<name>` over HTTP with a private data folder."""

    @pytest.fixture(scope="module", name=fixture_name)
    def serve(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabServer]:
        data = tmp_path_factory.mktemp(f"{name}-data")
        full_env = {"LABKIT_DATA_DIR": str(data), **(env or {})}
        with tempfile.TemporaryFile(mode="w+") as errlog, http_server(name, *args, env=full_env, errlog=errlog) as url:
            yield LabServer(name, url, data, args, full_env, errlog)

    return serve


def client_fixture() -> Any:
    """A module-scoped open client per (transport, mode) on the module's `server`: one stdio process per era."""

    @pytest.fixture(scope="module", name="client", params=CONNECTIONS)
    async def connect(request: pytest.FixtureRequest, server: LabServer) -> AsyncIterator[Client]:
        transport, mode = request.param
        async with server.client(transport, mode) as client:
            assert client.protocol_version == ERA[mode]
            yield client

    return connect


async def driven_by_hand(context: object, params: object) -> Any:
    """An elicitation callback for tests that drive the rounds themselves: it declares form elicitation,
    which a 2026-07-28 server needs before it may ask (else -32021), and is never called.
    """
    raise AssertionError("this test drives the rounds itself")


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def assert_tool_error(result: CallToolResult, *fragments: str) -> None:
    """An execution error: isError true, and a text the model can act on."""
    assert result.is_error, f"expected isError, got {result}"
    for fragment in fragments:
        assert fragment in text_of(result)


async def assert_unknown_tool(client: Client, name: str) -> None:
    """A protocol error as the spec says: JSON-RPC -32602 `Unknown tool: <name>`, raised as MCPError."""
    with pytest.raises(MCPError) as raised:
        await client.call_tool(name, {})
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.message == f"Unknown tool: {name}"


_TARGET_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


async def raw_modern_request(
    server: LabServer, transport: str, method: str, params: dict[str, Any], *, elicitation: bool = False
) -> tuple[dict[str, Any], int | None]:
    """One hand-written 2026-07-28 request, as a conformance harness sends it; returns (reply, HTTP status).

    No SDK client on the way: what the server answers is exactly what a foreign client would see.
    The `_meta` envelope declares form elicitation only when `elicitation` is true.
    """
    envelope = {
        "io.modelcontextprotocol/protocolVersion": ERA["auto"],
        "io.modelcontextprotocol/clientInfo": {"name": "raw-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}} if elicitation else {},
    }
    message = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": envelope}}
    with anyio.fail_after(30):
        if transport == "http":
            return await _raw_http(server.url, message)
        return await _raw_stdio(server, message), None


async def _raw_http(url: str, message: dict[str, Any]) -> tuple[dict[str, Any], int]:
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": ERA["auto"],
        "Mcp-Method": message["method"],
    }
    if (target := _TARGET_PARAM.get(message["method"])) is not None:
        headers["Mcp-Name"] = message["params"][target]
    async with httpx2.AsyncClient() as http:
        response = await http.post(url, json=message, headers=headers)
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
        return json.loads(data[-1]), response.status_code
    return response.json(), response.status_code


async def _raw_stdio(server: LabServer, message: dict[str, Any]) -> dict[str, Any]:
    params = stdio_params(server.name, *server.args, env=server.env)
    async with await anyio.open_process(
        [params.command, *params.args], env=params.env, cwd=params.cwd, stderr=server.errlog
    ) as process:
        await process.stdin.send(json.dumps(message).encode() + b"\n")
        received = b""
        async for chunk in process.stdout:
            received += chunk
            if b"\n" in received:
                break
        await process.stdin.aclose()
    return json.loads(received.split(b"\n")[0])


def query(database: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Raw SQL on a business system's file, so expectations come from the data, not from the code under test."""
    with closing(sqlite3.connect(database)) as db:
        return db.execute(sql, params).fetchall()
