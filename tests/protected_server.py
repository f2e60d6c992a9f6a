"""A test-only Streamable HTTP server that wants a bearer token (the SDK's bearer middleware): one token, one scope."""

import sys

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from pydantic import AnyHttpUrl

TOKEN = "let-me-in"


class OneToken:
    """Accepts `TOKEN` only, issued for this server with the scope `read`."""

    def __init__(self, resource: str) -> None:
        self.resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        if token != TOKEN:
            return None
        return AccessToken(token=token, client_id="test-client", scopes=["read"], resource=self.resource)


def build_server(port: int, required_scope: str = "read") -> MCPServer:
    resource = f"http://127.0.0.1:{port}/mcp"
    auth = AuthSettings(
        issuer_url=AnyHttpUrl("http://127.0.0.1:9/"),
        resource_server_url=AnyHttpUrl(resource),
        required_scopes=[required_scope],
        validate_token_resource=True,
    )
    mcp = MCPServer("protected", log_level="WARNING", auth=auth, token_verifier=OneToken(resource))

    @mcp.tool()
    def hello() -> str:
        """Say hello to whoever got in."""
        return "hello"

    return mcp


if __name__ == "__main__":
    port = int(sys.argv[sys.argv.index("--port") + 1])
    scope = sys.argv[sys.argv.index("--scope") + 1] if "--scope" in sys.argv else "read"
    build_server(port, scope).run("streamable-http", host="127.0.0.1", port=port)
