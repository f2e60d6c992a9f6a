"""A tiny test-only server for the trace-core tests: one tool, one tool that asks, both eras."""

import os
import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

SPACE_SCHEMA = {
    "type": "object",
    "properties": {"space": {"type": "string", "enum": ["personal", "team"]}},
    "required": ["space"],
}


class Space(BaseModel):
    space: str


def build_server() -> MCPServer:
    mcp = MCPServer("toy", log_level="WARNING")

    @mcp.tool()
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @mcp.tool()
    async def save(text: str, ctx: Context) -> CallToolResult | InputRequiredResult:
        """Save a note after asking where."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answer = (ctx.input_responses or {}).get("space")
            if answer is None:
                params = ElicitRequestFormParams(message="Where?", requested_schema=SPACE_SCHEMA)
                return InputRequiredResult(input_requests={"space": ElicitRequest(params=params)}, request_state="toy")
            assert isinstance(answer, ElicitResult), "the client answered the question asked"
            space = (answer.content or {})["space"]
        else:
            space = (await ctx.elicit("Where?", Space)).data.space
        return CallToolResult(content=[TextContent(type="text", text=f"saved {text} to {space}")])

    @mcp.tool()
    def die() -> str:
        """Exit the server process in the middle of the call."""
        os._exit(3)

    return mcp


if __name__ == "__main__":
    if "--http" in sys.argv:
        build_server().run("streamable-http", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--port") + 1]))
    else:
        build_server().run()
