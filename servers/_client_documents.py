"""Client ID metadata documents for the lab's authorization server (`auth.py`): a client whose ID is an HTTPS URL is
described by the JSON document at that URL, fetched, checked and cached as draft-ietf-oauth-client-id-metadata-document
says, instead of being registered (the MCP 2026-07-28 revision's preferred registration)."""

from __future__ import annotations

import json
import os
import re
import ssl
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
from mcp.shared.auth import OAuthClientInformationFull
from pydantic import ValidationError

from labkit.server_contract import TRUSTED_CA_ENV

__all__ = ["FETCH_SECONDS", "MAX_DOCUMENT_BYTES", "ClientDocuments", "DocumentRefused", "is_document_url"]

MAX_DOCUMENT_BYTES = 5 * 1024
"""The most this server reads of a document: the draft's suggested limit (5 kilobytes); a larger one is refused."""
FETCH_SECONDS = 5.0
"""How long a fetch may take on a quiet machine: the user's sign-in waits on it (the lab scales it by
`LABKIT_TIME_SCALE` and passes it as `auth.py --fetch-seconds`)."""
SHARED_SECRET_METHODS = {"client_secret_basic", "client_secret_post", "client_secret_jwt"}
"""Client authentication by a shared secret, which a public document cannot hold (the draft forbids them)."""
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)", re.IGNORECASE)


class DocumentRefused(Exception):
    """A client ID URL this server does not accept: the message names the URL and why."""


def is_document_url(client_id: str) -> bool:
    """True for a client ID that is a URL (any scheme with a host): it is checked as a document's URL, and refused
    with the reason when it is not a usable one, rather than looked up as a registered client's ID."""
    parts = urlsplit(client_id)
    return bool(parts.scheme and parts.netloc)


@dataclass
class _Cached:
    client: OAuthClientInformationFull
    fresh_until: float


class ClientDocuments:
    """The documents this server has fetched, each kept as long as its HTTP caching headers allow (RFC 9111:
    `Cache-Control` `max-age`, `no-store`, `no-cache`, else `Expires`); `default_scope` is what a document
    that names no `scope` may ask for; a fetch gets `fetch_seconds`, all told."""

    def __init__(self, default_scope: str, fetch_seconds: float = FETCH_SECONDS) -> None:
        self.default_scope = default_scope
        self.fetch_seconds = fetch_seconds
        self._cache: dict[str, _Cached] = {}
        ca_file = os.environ.get(TRUSTED_CA_ENV)
        # told which authority to trust, it trusts that one only; otherwise the system's, as any web client
        self._verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=ca_file) if ca_file else True

    async def client(self, url: str) -> OAuthClientInformationFull:
        """The client the document at `url` describes, from the cache while fresh, else fetched and checked;
        `DocumentRefused` names why a URL or its document is not accepted."""
        _check_url(url)
        cached = self._cache.get(url)
        if cached is not None and cached.fresh_until > time.time():
            return cached.client
        self._cache.pop(url, None)
        body, headers = await self._fetch(url)
        client = self._checked(url, body)
        lifetime = _freshness(headers)
        if lifetime > 0:
            self._cache[url] = _Cached(client, time.time() + lifetime)
        return client

    async def _fetch(self, url: str) -> tuple[bytes, httpx2.Headers]:
        limit = self.fetch_seconds
        try:
            with anyio.fail_after(limit):
                async with (
                    httpx2.AsyncClient(verify=self._verify, timeout=limit, follow_redirects=False) as http,
                    http.stream("GET", url, headers={"Accept": "application/json"}) as response,
                ):
                    if response.status_code != 200:
                        raise DocumentRefused(f"{url} answered HTTP {response.status_code}, not 200 with a document")
                    body = b""
                    async for chunk in response.aiter_bytes():
                        body += chunk
                        if len(body) > MAX_DOCUMENT_BYTES:
                            raise DocumentRefused(f"the document at {url} is larger than {MAX_DOCUMENT_BYTES} bytes")
                    return body, response.headers
        except TimeoutError:
            raise DocumentRefused(f"{url} did not answer within {limit:.0f} s") from None
        except httpx2.HTTPError as error:
            raise DocumentRefused(f"{url} could not be fetched: {error or type(error).__name__}") from None

    def _checked(self, url: str, body: bytes) -> OAuthClientInformationFull:
        try:
            document = json.loads(body)
        except ValueError:
            raise DocumentRefused(f"the document at {url} is not JSON") from None
        if not isinstance(document, dict):
            raise DocumentRefused(f"the document at {url} is not a JSON object")
        if document.get("client_id") != url:
            raise DocumentRefused(
                f"the document at {url} names client_id {document.get('client_id')!r}: it must be its own URL"
            )
        secrets = sorted(key for key in ("client_secret", "client_secret_expires_at") if key in document)
        if secrets:
            raise DocumentRefused(f"the document at {url} holds {', '.join(secrets)}: a public document has no secret")
        method = document.get("token_endpoint_auth_method", "none")
        if method in SHARED_SECRET_METHODS:
            raise DocumentRefused(f"the document at {url} asks for {method}, a shared secret, which no document may")
        if method != "none":
            raise DocumentRefused(f"the document at {url} asks for {method}; this server accepts only 'none'")
        redirects = document.get("redirect_uris")
        if not isinstance(redirects, list) or not redirects:
            raise DocumentRefused(f"the document at {url} names no redirect_uris")
        fields: dict[str, Any] = {"scope": self.default_scope, **document, "token_endpoint_auth_method": "none"}
        try:
            return OAuthClientInformationFull.model_validate(fields)
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise DocumentRefused(f"the document at {url} is not valid client metadata ({problems})") from None


def _check_url(url: str) -> None:
    """The draft's rules for a client ID URL (section 3): https, a path, no dot segments, no fragment, no user."""
    parts = urlsplit(url)
    problems = [
        (parts.scheme != "https", "it is not https"),
        (parts.path in ("", "/"), "it has no path"),
        (bool({".", ".."} & set(parts.path.split("/"))), "it has a '.' or '..' path segment"),
        (bool(parts.fragment) or url.endswith("#"), "it has a fragment"),
        (parts.username is not None or parts.password is not None, "it names a user or password"),
    ]
    problem = next((why for broken, why in problems if broken), None)
    if problem is not None:
        raise DocumentRefused(f"client_id {url} cannot name a client ID metadata document: {problem}")


def _freshness(headers: httpx2.Headers) -> float:
    """Seconds a response may be reused without asking again (RFC 9111 section 4.2.1); 0: not at all."""
    control = headers.get("cache-control", "").lower()
    if "no-store" in control or "no-cache" in control:
        return 0.0
    age = float(headers["age"]) if headers.get("age", "").isdigit() else 0.0
    if match := _MAX_AGE.search(control):
        return max(0.0, int(match.group(1)) - age)
    try:
        expires, date = parsedate_to_datetime(headers["expires"]), parsedate_to_datetime(headers["date"])
    except (KeyError, TypeError, ValueError):
        return 0.0
    return max(0.0, (expires - date).total_seconds() - age)
