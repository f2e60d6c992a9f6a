"""What HTTP said: each request's status and auth headers in the trace, and the replies the SDK makes up from them."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import httpx2

from .._i18n import _
from ..errors import AuthError
from ..trace import Actor, Event, Kind, Meta, Trace

__all__ = [
    "AUTH_STATUSES",
    "AuthorizationRefused",
    "HttpRecorder",
    "HttpRefused",
    "redact_credential",
    "refusal_in",
    "sign_in_refusal",
]

AUTH_STATUSES = (401, 403)
_MCP_HEADERS = ("mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id", "content-type")
_AUTH_HEADERS = ("authorization", "www-authenticate")
_BODY_SHOWN = 2_000


def redact_credential(value: str) -> str:
    """An `Authorization` value with its credential hidden: the scheme and the length stay (notebook 09)."""
    scheme, _sep, credential = value.partition(" ")
    if not credential:
        return f"[redacted, {len(value)} characters]"
    return f"{scheme} [redacted, {len(credential)} characters]"


class HttpRefused(AuthError):
    """A server answered HTTP 401 or 403 and the host could not get past it: the server, the status and the
    server's challenge (`WWW-Authenticate`), in one message (notebook 09)."""

    def __init__(self, server: str, url: str, status: int, method: str, challenge: str | None) -> None:
        self.server, self.url, self.status, self.method, self.challenge = server, url, status, method, challenge
        why = (
            _("it wants credentials the host did not send or that it does not accept")
            if status == 401
            else _("the credentials were accepted but do not allow this (insufficient scope)")
        )
        shown = challenge or _("no WWW-Authenticate header")
        super().__init__(
            _(
                "the {server} server ({url}) answered HTTP {status} to {method}: {why}. Its challenge: {challenge}"
            ).format(server=server, url=url, status=status, method=method, why=why, challenge=shown)
        )


class AuthorizationRefused(AuthError):
    """The authorization server refused the host's sign-in outright (an OAuth error, no consent page): the message
    names the server signed in to, the authorization server, the error and its description (notebook 09)."""

    def __init__(self, server: str, authority: str, error: str, description: str) -> None:
        self.server, self.authority, self.error, self.description = server, authority, error, description
        super().__init__(
            _("the authorization server {authority} refused the sign-in to the {server} server: {error}: {why}").format(
                authority=authority, server=server, error=error, why=description
            )
        )


@dataclass
class HttpRecorder:
    """The httpx event hooks of one server's client: every request and response recorded (the MCP headers, and
    `Authorization` redacted); a failed response is recorded where the default table shows it, with the body's
    words, and when its body is not a JSON-RPC error the request's id is noted in `made_up`: the SDK's client
    answers that request itself, and the tap records that answer as the client's, not the server's."""

    trace: Trace
    server: str
    origin: str | None = None
    """The MCP server's scheme://host:port; requests elsewhere (OAuth discovery, registration, tokens) go to
    the authorization server and are recorded as its."""
    made_up: dict[Any, int] = field(default_factory=dict)
    refusal: Event | None = None
    """The last 401 or 403 this server answered."""

    def hooks(self) -> dict[str, list[Callable[..., Awaitable[None]]]]:
        return {"request": [self.on_request], "response": [self.on_response]}

    def _peer(self, url: httpx2.URL) -> Actor:
        elsewhere = self.origin is not None and f"{url.scheme}://{url.netloc.decode()}" != self.origin
        return "auth" if elsewhere else "server"

    async def on_request(self, request: httpx2.Request) -> None:
        headers = _shown_headers(request.headers)
        mcp_method = headers.get("mcp-method")
        self.trace.record(
            "client",
            self._peer(request.url),
            Kind.HTTP_REQUEST,
            f"{request.method} {request.url.path}" + (f" {mcp_method}" if mcp_method else ""),
            payload={"method": request.method, "path": request.url.path, "headers": headers},
            server=self.server,
            layer="http",
        )

    async def on_response(self, response: httpx2.Response) -> None:
        headers = _shown_headers(response.headers)
        status = response.status_code
        peer = self._peer(response.request.url)
        if status < 400:
            self.trace.record(
                peer,
                "client",
                Kind.HTTP_RESPONSE,
                f"HTTP {status} {headers.get('content-type', '')}".strip(),
                payload={"status": status, "headers": headers},
                server=self.server,
                layer="http",
                status=status,
            )
            return
        await response.aread()  # small, and the SDK reads the same bytes again from the cache
        body = _body(response)
        request = response.request
        sent = _sent(request)
        if sent.get("id") is not None and not _is_jsonrpc_error(body):
            self.made_up[sent["id"]] = status
        label = request.headers.get("mcp-method") or sent.get("method") or request.method
        challenge = headers.get("www-authenticate")
        sent_auth = _shown_headers(request.headers).get("authorization")
        summary = (
            _("HTTP {status} to {method}").format(status=status, method=label)
            + (f": {body['error'].get('message')}" if _is_jsonrpc_error(body) else "")
            + (f" · WWW-Authenticate: {challenge}" if challenge else "")
            + (f" · sent Authorization: {sent_auth}" if sent_auth else "")
        )
        event = self.trace.record(
            peer,
            "client",
            Kind.HTTP_RESPONSE,
            summary,
            payload={
                "status": status,
                "headers": headers,
                "body": body,
                "request": {
                    "method": request.method,
                    "path": request.url.path,
                    "jsonrpc_method": label,
                    "headers": _shown_headers(request.headers),
                },
            },
            server=self.server,
            layer="http",
            status=status,
            failed=True,
        )
        if status in AUTH_STATUSES and peer == "server":
            self.refusal = event

    def refused(self, url: str) -> HttpRefused | None:
        """The 401 or 403 that stopped this server, as one error, if there was one."""
        return None if self.refusal is None else refused_error(self.refusal, url)


def sign_in_refusal(error: BaseException) -> AuthorizationRefused | None:
    """The authorization server's own refusal among an error's causes and groups, if that is what stopped a start."""
    pending, seen = [error], set()
    while pending:
        found = pending.pop()
        if isinstance(found, AuthorizationRefused):
            return found
        if id(found) not in seen:
            seen.add(id(found))
            pending += [e for e in (*getattr(found, "exceptions", ()), found.__cause__, found.__context__) if e]
    return None


def refused_error(event: Event, url: str) -> HttpRefused:
    headers = event.payload.get("headers", {})
    method = event.payload["request"]["jsonrpc_method"]
    return HttpRefused(event.meta[Meta.SERVER], url, event.payload["status"], method, headers.get("www-authenticate"))


def refusal_in(events: Iterable[Event], server: str) -> Event | None:
    """The last 401 or 403 `server` answered among `events`."""
    found = None
    for event in events:
        if (
            event.kind == Kind.HTTP_RESPONSE
            and event.meta.get(Meta.SERVER) == server
            and event.meta.get(Meta.STATUS) in AUTH_STATUSES
        ):
            found = event
    return found


def _shown_headers(headers: Any) -> dict[str, str]:
    shown = {k.lower(): v for k, v in headers.items() if k.lower() in _MCP_HEADERS + _AUTH_HEADERS}
    if "authorization" in shown:
        shown["authorization"] = redact_credential(shown["authorization"])
    return shown


def _sent(request: httpx2.Request) -> dict[str, Any]:
    """The JSON-RPC message a POST carried ({} for a GET or a body that is not one)."""
    try:
        sent = json.loads(request.content or b"null")
    except (ValueError, httpx2.RequestNotRead):
        return {}
    return sent if isinstance(sent, dict) else {}


def _body(response: httpx2.Response) -> Any:
    text = response.text[:_BODY_SHOWN]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _is_jsonrpc_error(body: Any) -> bool:
    return isinstance(body, dict) and body.get("jsonrpc") == "2.0" and isinstance(body.get("error"), dict)
