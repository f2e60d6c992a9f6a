"""A test-only server whose `tools/list` never ends: every page after the first sends the same `nextCursor` again."""

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer

_AGAIN = "again"


def build_server() -> MCPServer:
    mcp = MCPServer("endless", log_level="WARNING")

    async def endless(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        """One tool a page, and always a next page: the first page's cursor, then the same cursor again."""
        result = await call_next(ctx)
        if ctx.method != "tools/list" or not isinstance(result, dict):
            return result
        start = 0 if (ctx.params or {}).get("cursor") is None else 1
        return {**result, "tools": result["tools"][start : start + 1], "nextCursor": _AGAIN}

    mcp.middleware.append(endless)
    for n in range(3):
        mcp.add_tool(lambda: "ok", name=f"tool_{n}", description=f"Tool number {n}.")
    return mcp


if __name__ == "__main__":
    build_server().run()
