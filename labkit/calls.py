"""Carrying the model's tool calls: route to a server, gate, send with a timeout, write the result as data."""

from __future__ import annotations

import base64
import json
import re
import time
from typing import Any

import anyio
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, Tool

from .audit import AuditEntry, AuditLog, argument_hash
from .events import Trace
from .gate import GatePolicy, check_call
from .model.conversation import ToolCall, ToolResult

__all__ = ["ToolRouter", "result_as_data"]

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]|\x1b\[[0-9;]*[A-Za-z]")


def result_as_data(result: CallToolResult) -> str:
    """What the model is shown of a tool result: its structured data as JSON when there is any,
    else its text; control characters stripped; images named, not inlined (notebook 02)."""
    if result.structured_content is not None and not result.is_error:
        return json.dumps(result.structured_content, ensure_ascii=False)
    parts = []
    for block in result.content:
        if block.type == "text":
            parts.append(_CONTROL.sub("", block.text))
        elif block.type == "image":
            size = len(base64.b64decode(block.data))
            parts.append(f"[{block.mime_type} image, {size} bytes, kept by the host]")
    return "\n".join(parts)


class ToolRouter:
    """Knows which server offers which tool, and carries each call through the gate (notebook 03).

    A name no server listed is sent to the first server, which answers with the spec's protocol
    error; the host then tells the model, in its own words, that the tool does not exist.
    """

    def __init__(self, trace: Trace, audit: AuditLog, policy: GatePolicy, call_timeout: float) -> None:
        self.trace = trace
        self.audit = audit
        self.policy = policy
        self.call_timeout = call_timeout
        self.succeeded: set[str] = set()
        self._clients: dict[str, Client] = {}
        self._routes: dict[str, tuple[str, Tool]] = {}

    def add_server(self, name: str, client: Client) -> None:
        self._clients[name] = client

    async def refresh(self) -> None:
        """List every server's tools; the SDK serves a list again from its cache while `ttlMs` lasts."""
        routes: dict[str, tuple[str, Tool]] = {}
        for name, client in self._clients.items():
            for tool in (await client.list_tools()).tools:
                routes.setdefault(tool.name, (name, tool))
        self._routes = routes

    @property
    def tools(self) -> list[Tool]:
        return [tool for _, tool in self._routes.values()]

    def route(self, tool_name: str) -> tuple[str, Tool | None]:
        if tool_name in self._routes:
            return self._routes[tool_name]
        return next(iter(self._clients)), None

    async def execute(self, call: ToolCall) -> ToolResult:
        server, tool = self.route(call.name)
        if call.error is not None:
            return self._refuse(call, server, "malformed", f"the arguments were not valid JSON: {call.error}")
        arguments = call.arguments or {}
        decision = await check_call(server, tool, call.name, arguments, self.policy)
        self.trace.record(
            "host", "host", "host.gate", f"gate {call.name}: {decision.summary}", ref=call.id, name=call.name,
            payload={"server": server, "arguments": arguments, "reasons": list(decision.reasons)},
        )
        if not decision.allowed:
            return self._refuse(call, server, "blocked", "; ".join(decision.reasons), arguments)
        return await self._send(call, server, arguments, decision.approval)

    async def _send(self, call: ToolCall, server: str, arguments: dict[str, Any], approval: str) -> ToolResult:
        started = time.monotonic()
        decision = "allowed" if approval == "not needed" else f"allowed ({approval})"
        try:
            with anyio.fail_after(self.call_timeout + 1):
                result = await self._clients[server].call_tool(
                    call.name, arguments, read_timeout_seconds=self.call_timeout
                )
        except MCPError as error:
            outcome = f"protocol error {error.error.code}"
            text = f"The host could not run {call.name}: {error.error.message} (JSON-RPC error {error.error.code})."
            self.trace.record("host", "host", "host.error", f"{outcome} handled by the host: {error.error.message}",
                              ref=call.id, name=call.name, payload=error.error.model_dump(mode="json"))
            return self._audited(call, server, arguments, decision, outcome, started, ToolResult(call.id, text, True))
        except TimeoutError:
            text = f"The host stopped waiting for {call.name} after {self.call_timeout:g} s."
            self.trace.record("host", "host", "host.error", text, ref=call.id, name=call.name)
            return self._audited(call, server, arguments, decision, "timeout", started, ToolResult(call.id, text, True))
        if not result.is_error:
            self.succeeded.add(call.name)
        outcome = "isError" if result.is_error else "ok"
        return self._audited(
            call, server, arguments, decision, outcome, started, ToolResult(call.id, result_as_data(result), result.is_error)
        )

    def _refuse(
        self, call: ToolCall, server: str, decision: str, why: str, arguments: dict[str, Any] | None = None
    ) -> ToolResult:
        text = f"The host did not run {call.name}: {why}."
        self.audit.add(AuditEntry(self.trace.round, server, call.name, argument_hash(arguments), decision, "not sent"))
        return ToolResult(call.id, text, True)

    def _audited(
        self, call: ToolCall, server: str, arguments: dict[str, Any], decision: str, outcome: str,
        started: float, result: ToolResult,
    ) -> ToolResult:
        latency = round((time.monotonic() - started) * 1000, 1)
        self.audit.add(AuditEntry(self.trace.round, server, call.name, argument_hash(arguments), decision, outcome, latency))
        return result
