"""A lab server as an OAuth 2.1 protected resource: the SDK's bearer middleware, tokens checked by introspection
at the lab's authorization server (`servers/auth.py`), and scopes that decide which tools a caller sees."""

from __future__ import annotations

import os
from typing import Any

import httpx2
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import AnyHttpUrl

from labkit.server_contract import AUTH_ISSUER_ENV

__all__ = ["AUTH_ISSUER_ENV", "RESOURCE_URL_ENV", "auth_options", "required_scope", "scoped_tools"]

RESOURCE_URL_ENV = "LABKIT_RESOURCE_URL"
"""This server's own URL, the audience its tokens must name (RFC 8707); set by `run` from its port."""


class IntrospectionVerifier:
    """The SDK's `TokenVerifier`, asking the authorization server about each token (RFC 7662)."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer

    async def verify_token(self, token: str) -> AccessToken | None:
        async with httpx2.AsyncClient(timeout=10.0) as http:
            answer = (await http.post(f"{self.issuer}/introspect", data={"token": token})).json()
        if not answer.get("active"):
            return None
        return AccessToken(
            token=token,
            client_id=answer["client_id"],
            scopes=answer.get("scope", "").split(),
            expires_at=answer.get("exp"),
            resource=answer.get("aud"),
            subject=answer.get("sub"),
            claims={"iss": answer.get("iss")},
        )


def auth_options() -> dict[str, Any]:
    """`MCPServer` keyword arguments that protect it, when `LABKIT_AUTH_ISSUER` names an authorization server:
    its metadata (RFC 9728) and `WWW-Authenticate` on 401 come from the SDK; tokens issued for another
    resource (audience), expired or unknown are refused by the SDK's bearer middleware."""
    issuer = os.environ.get(AUTH_ISSUER_ENV)
    if not issuer:
        return {}
    resource = os.environ[RESOURCE_URL_ENV]
    auth = AuthSettings(
        issuer_url=AnyHttpUrl(issuer), resource_server_url=AnyHttpUrl(resource), validate_token_resource=True
    )
    return {"auth": auth, "token_verifier": IntrospectionVerifier(issuer)}


def required_scope(tool: Any) -> str:
    """`read` for a tool that says it only reads (readOnlyHint), `write` for every other."""
    return "read" if tool.annotations is not None and tool.annotations.read_only_hint else "write"


def scoped_tools(server: MCPServer) -> ServerMiddleware[Any]:
    """A caller sees in `tools/list` only the tools its token's scopes allow, and may call only those."""

    async def check(ctx: ServerRequestContext[Any], call_next: CallNext) -> HandlerResult:
        token = get_access_token()
        if token is None or ctx.method not in ("tools/list", "tools/call"):
            return await call_next(ctx)
        allowed = {tool.name for tool in await server.list_tools() if required_scope(tool) in token.scopes}
        if ctx.method == "tools/call" and (ctx.params or {}).get("name") not in allowed:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {(ctx.params or {}).get('name')}")
        result = await call_next(ctx)
        if ctx.method == "tools/list" and isinstance(result, dict):
            result = {**result, "tools": [t for t in result.get("tools", []) if t.get("name") in allowed]}
        return result

    return check
