"""The lab's OAuth 2.1 authorization server: the SDK's provider protocol and routes, a consent page, introspection.

Authorization code with PKCE (checked by the SDK's token handler), client ID metadata documents (a client whose
ID is an HTTPS URL, `_client_documents.py`) and dynamic client registration beside them, refresh, revocation, and
RFC 7662 introspection for the lab's protected servers. Tokens are opaque random strings
kept in this process; each names its client, user (`sub`), scopes, audience (RFC 8707 `resource`) and
expiry. The users and the scopes each may grant are the lab's: `alice` may read and write, `bob` only read.
"""

from __future__ import annotations

import argparse
import html
import os
import secrets
import time
from contextvars import ContextVar
from dataclasses import dataclass
from urllib.parse import urlsplit

from mcp.server.auth.handlers.authorize import AuthorizationHandler
from mcp.server.auth.handlers.metadata import MetadataHandler
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    OAuthAuthorizationServerProvider,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import AUTHORIZATION_PATH, build_metadata, cors_middleware, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE, RequestBodyLimitMiddleware
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route, request_response

from ._client_documents import FETCH_SECONDS, ClientDocuments, DocumentRefused, is_document_url
from ._wiring import add_http_flags, http_port, serve_http
from .i18n import _

USERS = {"alice": ("read", "write"), "bob": ("read",)}
"""Who can sign in, and the scopes each may grant: scopes decide which tools a caller sees and may call."""
SCOPES = ["read", "write"]
TOKEN_TTL_ENV = "LABKIT_TOKEN_TTL"
"""How long an access token issued at sign-in lasts, in seconds (default 3600): notebook 09 makes one expire. A
refreshed token lasts the default: the lesson waits out the first token, and on a busy machine a second short one
could expire between a connection's requests, which would ask the user to sign in again."""
_DEFAULT_TTL = 3600


@dataclass
class _Pending:
    client: OAuthClientInformationFull
    params: AuthorizationParams


class LabAuthProvider(OAuthAuthorizationServerProvider[AuthorizationCode, RefreshToken, AccessToken]):
    """The SDK's `OAuthAuthorizationServerProvider`, in memory: clients, consent requests, codes and tokens."""

    def __init__(self, issuer: str, fetch_seconds: float = FETCH_SECONDS) -> None:
        self.issuer = issuer
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.pending: dict[str, _Pending] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.documents = ClientDocuments(" ".join(SCOPES), fetch_seconds, own_host=urlsplit(issuer).hostname or "")
        # the document the authorization endpoint checked, for the rest of that request: the SDK's handler asks for
        # the client again, and a document not cached would be fetched twice, its two answers possibly different
        self.checked_document: ContextVar[OAuthClientInformationFull | None] = ContextVar("checked", default=None)

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        """A registered client, or the one a client ID metadata document describes (None: neither, or refused)."""
        if not is_document_url(client_id):
            return self.clients.get(client_id)
        checked = self.checked_document.get()
        if checked is not None and checked.client_id == client_id:
            return checked
        try:
            return await self.documents.client(client_id)
        except DocumentRefused:
            return None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        """The user is sent to the consent page, which names the client, the scopes and the server asked for."""
        request = secrets.token_urlsafe(16)
        self.pending[request] = _Pending(client, params)
        return f"{self.issuer}/consent?request={request}"

    def consent(self, request: str, user: str | None) -> str:
        """Where the browser goes after the consent page: back to the client with a code, or with access_denied."""
        pending = self.pending.pop(request)
        redirect = str(pending.params.redirect_uri)
        if user not in USERS:
            return construct_redirect_uri(redirect, error="access_denied", state=pending.params.state)
        asked = pending.params.scopes or list(USERS[user])
        code = AuthorizationCode(
            code=secrets.token_urlsafe(32),
            scopes=[s for s in asked if s in USERS[user]],
            expires_at=time.time() + 300,
            client_id=pending.client.client_id or "",
            code_challenge=pending.params.code_challenge,
            redirect_uri=pending.params.redirect_uri,
            redirect_uri_provided_explicitly=pending.params.redirect_uri_provided_explicitly,
            resource=pending.params.resource,
            subject=user,
        )
        self.codes[code.code] = code
        return construct_redirect_uri(redirect, code=code.code, state=pending.params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        code = self.codes.get(authorization_code)
        return code if code is not None and code.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]  # a code is good once
        return self._issue(
            client.client_id or "", authorization_code.scopes, authorization_code.resource, authorization_code.subject
        )

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        token = self.refresh.get(refresh_token)
        return token if token is not None and token.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]  # rotated: an old refresh token is good once
        return self._issue(
            refresh_token.client_id,
            scopes or refresh_token.scopes,
            refresh_token.resource,
            refresh_token.subject,
            ttl=_DEFAULT_TTL,
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(
        self, client_id: str, scopes: list[str], resource: str | None, subject: str | None, ttl: int | None = None
    ) -> OAuthToken:
        ttl = ttl or int(os.environ.get(TOKEN_TTL_ENV) or _DEFAULT_TTL)
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + ttl,
            resource=resource,
            subject=subject,
            claims={"iss": self.issuer},
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource, subject=subject
        )
        return OAuthToken(
            access_token=access, token_type="Bearer", expires_in=ttl, scope=" ".join(scopes), refresh_token=refresh
        )

    def introspect(self, token: str) -> dict[str, object]:
        """RFC 7662: what a protected server needs to decide (active, audience, scopes, expiry, who)."""
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return {"active": False}
        return {
            "active": True,
            "client_id": found.client_id,
            "scope": " ".join(found.scopes),
            "exp": found.expires_at,
            "aud": found.resource,
            "sub": found.subject,
            "iss": self.issuer,
            "token_type": "Bearer",
        }


def build_app(port: int, fetch_seconds: float = FETCH_SECONDS) -> Starlette:
    issuer = f"http://127.0.0.1:{port}"
    provider = LabAuthProvider(issuer, fetch_seconds)
    registration = ClientRegistrationOptions(enabled=True, valid_scopes=SCOPES, default_scopes=SCOPES)
    revocation = RevocationOptions(enabled=True)
    routes = create_auth_routes(
        provider, issuer_url=AnyHttpUrl(issuer), client_registration_options=registration, revocation_options=revocation
    )
    metadata = build_metadata(AnyHttpUrl(issuer), None, registration, revocation)
    metadata.client_id_metadata_document_supported = True
    metadata.token_endpoint_auth_methods_supported = [*(metadata.token_endpoint_auth_methods_supported or []), "none"]
    sdk_authorize = AuthorizationHandler(provider).handle

    async def authorize(request: Request) -> Response:
        """The SDK's authorization endpoint, after the client is found: a client ID metadata document's URL and
        document checked, a registered client looked up; a refusal says why in the learner's language (the SDK alone
        would say, in English, only that the client is not found). The error codes stay the SDK's."""
        params = request.query_params if request.method == "GET" else await request.form()
        client_id = str(params.get("client_id") or "")
        if is_document_url(client_id):
            try:
                checked = provider.checked_document.set(await provider.documents.client(client_id))
            except DocumentRefused as refused:
                return _refusal("invalid_client", str(refused))
            try:
                return await sdk_authorize(request)
            finally:
                provider.checked_document.reset(checked)
        elif client_id and client_id not in provider.clients:
            why = _(
                "client_id {client_id} is not registered here: register it first (POST {endpoint}), or sign in with "
                "the HTTPS URL of a client ID metadata document"
            ).format(client_id=client_id, endpoint=f"{issuer}/register")
            return _refusal("invalid_request", why)
        return await sdk_authorize(request)

    replaced: dict[str, Route] = {
        "/.well-known/oauth-authorization-server": Route(
            "/.well-known/oauth-authorization-server",
            endpoint=cors_middleware(MetadataHandler(metadata).handle, ["GET", "OPTIONS"]),
            methods=["GET", "OPTIONS"],
        ),
        AUTHORIZATION_PATH: Route(
            AUTHORIZATION_PATH,
            endpoint=RequestBodyLimitMiddleware(request_response(authorize), DEFAULT_MAX_REQUEST_BODY_SIZE),
            methods=["GET", "POST"],
        ),
    }
    routes = [replaced.get(route.path, route) for route in routes]

    async def consent_page(request: Request) -> Response:
        pending = provider.pending.get(request.query_params.get("request", ""))
        if pending is None:
            return _unknown_consent()
        client = html.escape(pending.client.client_name or pending.client.client_id or "?")
        if is_document_url(pending.client.client_id or ""):  # its name is its own claim; its URL says who publishes it
            client = _("{client} (described at {url})").format(
                client=client, url=html.escape(pending.client.client_id or "")
            )
        asked = _("{client} asks for {scopes} on {resource}.").format(
            client=f"<b>{client}</b>",
            scopes=f"<b>{html.escape(' '.join(pending.params.scopes or SCOPES))}</b>",
            resource=f"<b>{html.escape(pending.params.resource or '?')}</b>",
        )
        users = "".join(
            f'<option value="{u}">'
            + html.escape(_("{user} (may grant {scopes})").format(user=u, scopes=" ".join(s)))
            + "</option>"
            for u, s in USERS.items()
        )
        title, allow, deny = html.escape(_("Sign in and consent")), html.escape(_("Allow")), html.escape(_("Deny"))
        return HTMLResponse(
            f"<h1>{title}</h1><p>{asked}</p>"
            f'<form method="post" action="/consent"><input type="hidden" name="request" '
            f'value="{html.escape(request.query_params["request"])}"><select name="user">{users}</select>'
            f'<button name="decision" value="allow">{allow}</button>'
            f'<button name="decision" value="deny">{deny}</button></form>'
        )

    async def consent_answer(request: Request) -> Response:
        form = await request.form()
        request_id = str(form.get("request", ""))
        if request_id not in provider.pending:
            return _unknown_consent()
        user = str(form.get("user")) if form.get("decision") == "allow" else None
        return RedirectResponse(provider.consent(request_id, user), status_code=302)

    async def introspect(request: Request) -> Response:
        form = await request.form()
        return JSONResponse(provider.introspect(str(form.get("token", ""))))

    routes += [
        Route("/consent", consent_page, methods=["GET"]),
        Route("/consent", consent_answer, methods=["POST"]),
        Route("/introspect", introspect, methods=["POST"]),
    ]
    return Starlette(routes=routes)


def _refusal(error: str, description: str) -> Response:
    """An OAuth error answered to the user's browser (no redirect: the client is not known to be who it says)."""
    return JSONResponse({"error": error, "error_description": description}, 400, {"Cache-Control": "no-store"})


def _unknown_consent() -> Response:
    unknown = html.escape(_("This consent request is unknown or already answered."))
    return HTMLResponse(f"<p>{unknown}</p>", status_code=400)


def main() -> None:
    parser = argparse.ArgumentParser()
    add_http_flags(parser, default_port=9000)  # `--http` is accepted like every lab server's; it only speaks HTTP
    parser.add_argument(
        "--fetch-seconds", type=float, default=FETCH_SECONDS, help="limit on fetching a client ID metadata document"
    )
    options = parser.parse_args()
    port = http_port(options.port, options.fd)
    serve_http(build_app(port, options.fetch_seconds), port, options.fd, "warning")


if __name__ == "__main__":
    main()
