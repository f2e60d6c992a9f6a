"""A test-only server whose `tools/list` is one message far over the host's limit: 300 tools, ~24 kB each."""

from mcp.server.mcpserver import MCPServer


def build_server() -> MCPServer:
    server = MCPServer("flooding", log_level="WARNING")
    for number in range(300):

        def tool(x: int = 0) -> str:
            return "ok"

        server.add_tool(tool, name=f"tool_{number}", description="padding " * 3000)
    return server


if __name__ == "__main__":
    build_server().run()
