"""The host as an OAuth 2.1 client, through the SDK's `OAuthClientProvider`: consent asked of the user (notebook 09)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from .._i18n import _
from ..errors import AuthError
from ..processes import direct_to_loopback
from ..trace import Kind, Trace
from ._connector import FORM_ABOUT, Elicitor
from ._http_record import AuthorizationRefused

__all__ = [
    "REDIRECT_URI",
    "ClientCredentials",
    "HostTokens",
    "SignIn",
    "client_metadata_document",
    "oauth_provider",
]

REDIRECT_URI = "http://127.0.0.1/labkit-host/callback"
"""Where the authorization server sends the browser back; the host's browser reads the code from that redirect."""
_CLIENT_METADATA = OAuthClientMetadata(
    redirect_uris=[AnyUrl(REDIRECT_URI)],
    client_name="labkit-host",
    grant_types=["authorization_code", "refresh_token"],
    response_types=["code"],
)


class _ReportedByTheHost(logging.Filter):
    """The SDK's OAuth client logs a failed sign-in with its traceback on the host's stderr, then raises it again: a
    sign-in the host itself ended (declined, refused by the authorization server) is one clear error, said once."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], AuthError))


logging.getLogger("mcp.client.auth.oauth2").addFilter(_ReportedByTheHost())


def client_metadata_document(url: str) -> dict[str, Any]:
    """The host's client ID metadata document, to publish at `url` (notebook 09): the same metadata it registers
    with where an authorization server takes no document, with `url` as its client ID and no secret."""
    metadata = _CLIENT_METADATA.model_dump(mode="json", exclude_none=True)
    return {**metadata, "client_id": url, "token_endpoint_auth_method": "none"}


@dataclass
class HostTokens(TokenStorage):
    """One server's tokens and client registration, kept in the host's memory: no server, and no other server's
    connection, can read them (each connection has its own store), so a token is never passed through."""

    tokens: OAuthToken | None = None
    client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class SignIn:
    """How the host signs the user in to protected servers (notebook 09).

    `consent` shows the user which server asks, at which authorization server, for which scopes, and
    returns `{"allow": True}` to go on; `user` is who the host's browser signs in as on the authorization
    server's consent page (the lab's users: `alice`, `bob`). `stores` holds each server's tokens.
    """

    consent: Elicitor
    user: str = "alice"
    client_id: str | None = None
    """A client registered with the authorization server beforehand (pre-registration): the host uses it, with
    `client_secret` if it has one, instead of registering itself; `issuer` names that authorization server, and
    the credentials are offered to no other."""
    client_secret: str | None = None
    issuer: str | None = None
    client_metadata_url: str | None = None
    """The HTTPS URL of the host's client ID metadata document (CIMD): its client ID wherever the authorization
    server accepts one, instead of dynamic registration."""
    stores: dict[str, HostTokens] = field(default_factory=dict)
    clients: dict[str, OAuthClientProvider] = field(default_factory=dict)
    """One SDK OAuth client per server, kept across connections: it knows when its token expires, and refreshes."""
    trace: Trace | None = None
    """The trace of the host now using this sign-in: consent and the browser's steps are recorded there."""


@dataclass
class ClientCredentials:
    """How the host signs in as itself, with no user and no browser: the OAuth client-credentials grant (the MCP
    extension for machine-to-machine access), with a client the authorization server `issuer` registered. The
    client proves itself with `client_secret`, or with a JWT signed by `private_key_pem` (RFC 7523)."""

    client_id: str
    client_secret: str | None = None
    private_key_pem: str | None = None
    signing_algorithm: str = "RS256"
    issuer: str | None = None
    """The authorization server that issued the client; the secret is sent to no other (None: whichever the
    server's metadata names, which the SDK warns is deprecated)."""
    stores: dict[str, HostTokens] = field(default_factory=dict)
    clients: dict[str, OAuthClientProvider] = field(default_factory=dict)
    trace: Trace | None = None

    def __post_init__(self) -> None:
        if self.client_secret is None and self.private_key_pem is None:
            raise AuthError(_("client credentials need a client secret or a private key"))


def oauth_provider(server: str, url: str, sign_in: SignIn | ClientCredentials, trace: Trace) -> OAuthClientProvider:
    """The SDK's OAuth client for one server: discovery from its 401, registration (or the client given), PKCE for
    a user's sign-in or the client-credentials grant, refresh."""
    sign_in.trace = trace
    if server not in sign_in.clients:
        store = sign_in.stores.setdefault(server, HostTokens())
        if isinstance(sign_in, ClientCredentials):
            sign_in.clients[server] = _machine_provider(url, store, sign_in)
        else:
            sign_in.clients[server] = _new_provider(server, url, store, sign_in)
    return sign_in.clients[server]


def _machine_provider(url: str, store: HostTokens, client: ClientCredentials) -> OAuthClientProvider:
    if client.private_key_pem is None:
        assert client.client_secret is not None  # one of the two, as ClientCredentials checks
        return ClientCredentialsOAuthProvider(url, store, client.client_id, client.client_secret, issuer=client.issuer)
    assertion = SignedJWTParameters(
        issuer=client.client_id,
        subject=client.client_id,
        signing_key=client.private_key_pem,
        signing_algorithm=client.signing_algorithm,
    )
    return PrivateKeyJWTOAuthProvider(
        url, store, client.client_id, assertion.create_assertion_provider(), issuer=client.issuer
    )


def _new_provider(server: str, url: str, store: HostTokens, sign_in: SignIn) -> OAuthClientProvider:
    if sign_in.client_id is not None and store.client is None:
        store.client = _pre_registered(sign_in)
    redirected: dict[str, str] = {}

    async def redirect(authorization_url: str) -> None:
        trace = sign_in.trace
        assert trace is not None
        query = parse_qs(urlsplit(authorization_url).query)
        scopes = " ".join(query.get("scope", [])) or _("(none named)")
        authority = urlsplit(authorization_url).netloc
        message = _("The {server} server wants you to sign in at {authority} and allow the host: {scopes}").format(
            server=server, authority=authority, scopes=scopes
        )
        trace.record(
            "host",
            "user",
            Kind.HOST_FORM,
            message,
            payload={
                "server": server,
                "authorization_server": authority,
                "scopes": scopes,
                "resource": (query.get("resource") or [""])[0] or None,
            },
            server=server,
            asked_by="host",  # the host's own question, about signing in to that server
        )
        token = FORM_ABOUT.set(_("the host, signing in to the {server} server").format(server=server))
        try:
            answer = await sign_in.consent(
                message,
                {
                    "type": "object",
                    "properties": {"allow": {"type": "boolean", "title": _("Allow")}},
                    "required": ["allow"],
                },
            )
        finally:
            FORM_ABOUT.reset(token)
        allowed = bool(answer and answer.get("allow"))
        trace.record("user", "host", Kind.USER_ANSWER, _("allow") if allowed else _("decline"), payload=answer)
        redirected.update(await _browse(server, authorization_url, sign_in.user if allowed else None, trace))

    async def callback() -> AuthorizationCodeResult:
        if "code" not in redirected:
            raise AuthError(
                _("the sign-in to the {server} server was declined ({error})").format(
                    server=server, error=redirected.get("error", "access_denied")
                )
            )
        return AuthorizationCodeResult(
            code=redirected["code"], state=redirected.get("state"), iss=redirected.get("iss")
        )

    return OAuthClientProvider(
        server_url=url,
        client_metadata=_CLIENT_METADATA.model_copy(deep=True),  # the SDK's client writes the scopes it asks into it
        storage=store,
        redirect_handler=redirect,
        callback_handler=callback,
        client_metadata_url=sign_in.client_metadata_url,
    )


def _pre_registered(sign_in: SignIn) -> OAuthClientInformationFull:
    """The client the authorization server knows already; with a secret it is confidential and authenticates at
    the token endpoint with HTTP Basic, the default for a registered client (RFC 7591 section 2)."""
    assert sign_in.client_id is not None
    return OAuthClientInformationFull(
        client_id=sign_in.client_id,
        client_secret=sign_in.client_secret,
        redirect_uris=[AnyUrl(REDIRECT_URI)],
        token_endpoint_auth_method="client_secret_basic" if sign_in.client_secret else "none",
        grant_types=["authorization_code", "refresh_token"],
        issuer=sign_in.issuer,
    )


async def _browse(server: str, authorization_url: str, user: str | None, trace: Trace) -> dict[str, str]:
    """The user's browser on the authorization server: its consent page, if it shows one, answered as `user`
    (None: deny), up to the redirect back to the host, whose query is returned (code and state, or error).
    An authorization server that redirects back at once (it asks nothing itself) gets no consent page answered;
    one that answers with an OAuth error instead of a page is `AuthorizationRefused`, its reason recorded."""
    async with httpx2.AsyncClient(timeout=10.0, **direct_to_loopback(authorization_url)) as browser:
        answer = await _until_back(browser, browser.build_request("GET", authorization_url))
        if answer.is_client_error:
            _refused(server, answer, trace)
        if not _is_back(answer):
            page = answer
            request = parse_qs(page.url.query.decode() if isinstance(page.url.query, bytes) else str(page.url.query))
            trace.record(
                "user",
                "auth",
                Kind.AUTH_CONSENT,
                # the path: the arrow already names the authorization server, whose host and port are in the payload
                _("consent page: {url}").format(url=page.url.path),
                payload={"status": page.status_code, "url": str(page.url).split("?")[0]},
            )
            form: dict[str, Any] = {
                "request": request.get("request", [""])[0],
                "decision": "allow" if user is not None else "deny",
                "user": user or "",
            }
            answer = await _until_back(browser, browser.build_request("POST", str(page.url).split("?")[0], data=form))
    location = answer.headers.get("location", "")
    back = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    if user is None:  # declined in the host's own form: a code the server handed out anyway is not used
        back = {"error": back.get("error", "access_denied")}
    trace.record(
        "auth",
        "user",
        Kind.AUTH_REDIRECT,
        _("redirect back to the host: {what}").format(what="code" if "code" in back else back.get("error", "?")),
        payload={"status": answer.status_code},
    )
    return back


def _refused(server: str, answer: httpx2.Response, trace: Trace) -> None:
    try:
        body = answer.json()
    except ValueError:
        body = {}
    body = body if isinstance(body, dict) else {}
    error = str(body.get("error") or _("HTTP {status}").format(status=answer.status_code))
    description = str(body.get("error_description") or answer.text[:200])
    trace.record(
        "auth",
        "user",
        Kind.AUTH_REFUSED,
        _("refused: {error}").format(error=error),
        payload={"status": answer.status_code, "error": error, "error_description": description},
    )
    raise AuthorizationRefused(server, answer.url.netloc.decode(), error, description)


async def _until_back(browser: httpx2.AsyncClient, request: httpx2.Request) -> httpx2.Response:
    """Follows the authorization server's redirects, except the one back to the host: that one is read, not fetched."""
    response = await browser.send(request)
    while response.next_request is not None and not _is_back(response):
        response = await browser.send(response.next_request)
    return response


def _is_back(response: httpx2.Response) -> bool:
    return response.headers.get("location", "").startswith(REDIRECT_URI)
