"""A test-only server whose one tool declares an outputSchema with a `$ref` that resolves nowhere."""

from mcp.server.mcpserver import MCPServer


def build_server() -> MCPServer:
    server = MCPServer("broken-output-schema", log_level="WARNING")

    @server.tool()
    def status() -> dict[str, int]:
        """How many services are up."""
        return {"up": 1}

    # The SDK derives the schema from the return type; a server nobody checks may publish any schema at all.
    server._tool_manager.get_tool("status").fn_metadata.output_schema = {  # type: ignore[union-attr]
        "type": "object",
        "properties": {"up": {"$ref": "#/$defs/Missing"}},
    }
    return server


if __name__ == "__main__":
    build_server().run()
