"""A test-only server that asks the client for its roots (`roots/list`) and for a sampled message, in both eras."""

import sys

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import (
    CallToolResult,
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    InputRequiredResult,
    ListRootsRequest,
    ListRootsResult,
    SamplingMessage,
    TextContent,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS


def build_server() -> MCPServer:
    mcp = MCPServer("roots", log_level="WARNING")

    @mcp.tool()
    async def roots(ctx: Context) -> CallToolResult | InputRequiredResult:
        """The folders the client offers as roots, one URI a line."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answer = (ctx.input_responses or {}).get("roots")
            if answer is None:
                return InputRequiredResult(input_requests={"roots": ListRootsRequest()}, request_state="roots")
            assert isinstance(answer, ListRootsResult)
            listed = answer.roots
        else:
            listed = (await ctx.session.list_roots()).roots
        return CallToolResult(content=[TextContent(type="text", text="\n".join(str(r.uri) for r in listed))])

    @mcp.tool()
    async def summarise(text: str, ctx: Context) -> CallToolResult | InputRequiredResult:
        """Ask the client's model for a summary (sampling)."""
        params = CreateMessageRequestParams(
            messages=[SamplingMessage(role="user", content=TextContent(type="text", text=text))], max_tokens=50
        )
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            answer = (ctx.input_responses or {}).get("summary")
            if answer is None:
                return InputRequiredResult(
                    input_requests={"summary": CreateMessageRequest(params=params)}, request_state="summary"
                )
            assert isinstance(answer, CreateMessageResult)
            return CallToolResult(content=[TextContent(type="text", text=str(answer.content))])
        result = await ctx.session.create_message(params.messages, max_tokens=50)
        return CallToolResult(content=[TextContent(type="text", text=str(result.content))])

    return mcp


if __name__ == "__main__":
    if "--sse" in sys.argv:
        build_server().run("sse", host="127.0.0.1", port=int(sys.argv[sys.argv.index("--port") + 1]))
    else:
        build_server().run()
