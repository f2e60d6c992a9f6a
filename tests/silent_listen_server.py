"""A test-only server that says its tools can change, then never acknowledges a `subscriptions/listen`."""

from typing import Any

import anyio
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations


def build_server() -> MCPServer:
    mcp = MCPServer("silent", log_level="WARNING")

    async def never_acknowledge(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "subscriptions/listen":
            await anyio.sleep_forever()
        return await call_next(ctx)

    mcp.middleware.append(never_acknowledge)

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    def echo(text: str) -> str:
        """Say the text back."""
        return text

    return mcp


if __name__ == "__main__":
    build_server().run()
