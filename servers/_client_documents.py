"""Client ID metadata documents for the lab's authorization server (`auth.py`): a client whose ID is an HTTPS URL is
described by the JSON document at that URL, fetched, checked and cached as draft-ietf-oauth-client-id-metadata-document
says, instead of being registered (the MCP 2026-07-28 revision's preferred registration).

The fetch is a request the authorization server makes on a stranger's word (server-side request forgery is the
draft's first security consideration), so it is held to rules that hold for any URL: https only, on loopback too; the
host name resolved once, every address it resolves to checked and the connection made to a checked one (a name
cannot resolve to another address between check and fetch); no special-use address (RFC 6890: private, link-local
such as a cloud's metadata service, shared, unspecified, multicast, reserved), except loopback when this server itself
listens on loopback, the draft's one exception and the lab's development setting (the lab's client site is on
127.0.0.1); no redirect followed; at most `MAX_DOCUMENT_BYTES` read and `fetch_seconds` spent; the document's
`client_id` equal to its URL. A refusal names the URL and why, in the learner's language (`servers/i18n.py`).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import socket
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

from .i18n import _

__all__ = ["FETCH_SECONDS", "MAX_DOCUMENT_BYTES", "ClientDocuments", "DocumentRefused", "is_document_url"]

MAX_DOCUMENT_BYTES = 5 * 1024
"""The most this server reads of a document: the draft's suggested limit (5 kilobytes); a larger one is refused."""
FETCH_SECONDS = 5.0
"""How long a fetch may take on a quiet machine: the user's sign-in waits on it (the lab scales it by
`LABKIT_TIME_SCALE` and passes it as `auth.py --fetch-seconds`)."""
SHARED_SECRET_METHODS = {"client_secret_basic", "client_secret_post", "client_secret_jwt"}
"""Client authentication by a shared secret, which a public document cannot hold (the draft forbids them)."""
_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)", re.IGNORECASE)
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class DocumentRefused(Exception):
    """A client ID URL this server does not accept: the message names the URL and why."""


def is_document_url(client_id: str) -> bool:
    """True for a client ID that is a URL (any scheme with a host): it is checked as a document's URL, and refused
    with the reason when it is not a usable one, rather than looked up as a registered client's ID."""
    try:
        parts = urlsplit(client_id)
    except ValueError:  # a URL that does not parse (an unclosed IPv6 bracket) is still a URL: refused with why
        return True
    return bool(parts.scheme and parts.netloc)


@dataclass
class _Cached:
    client: OAuthClientInformationFull
    fresh_until: float


class ClientDocuments:
    """The documents this server has fetched, each kept as long as its HTTP caching headers allow (RFC 9111:
    `Cache-Control` `no-store` and `no-cache` keep nothing, then `max-age`, else `Expires` against `Date`, less
    `Age`; a refused document or an error is never kept); `default_scope` is what a document that names no `scope`
    may ask for; a fetch gets `fetch_seconds`, all told; `own_host` is the address this server listens on, which
    decides whether loopback addresses may be fetched."""

    def __init__(self, default_scope: str, fetch_seconds: float = FETCH_SECONDS, own_host: str = "") -> None:
        self.default_scope = default_scope
        self.fetch_seconds = fetch_seconds
        own = _address(own_host)
        self.loopback_allowed = own is not None and own.is_loopback
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
        try:
            with anyio.fail_after(self.fetch_seconds):
                body, headers = await self._fetch(url, await self._addresses(url))
        except TimeoutError:
            raise DocumentRefused(
                _("{url} did not answer within {seconds:.0f} s").format(url=url, seconds=self.fetch_seconds)
            ) from None
        client = self._checked(url, body)
        lifetime = _freshness(headers)
        if lifetime > 0:
            self._cache[url] = _Cached(client, time.time() + lifetime)
        return client

    async def _addresses(self, url: str) -> list[_Address]:
        """Every address the URL's host resolves to, each checked: one special-use address refuses the URL."""
        parts = urlsplit(url)
        host = parts.hostname or ""
        try:
            found = await anyio.getaddrinfo(host, parts.port or 443, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as error:  # UnicodeError: a name IDNA cannot encode (a label too long)
            raise DocumentRefused(
                _("the host of {url} could not be resolved ({error})").format(url=url, error=error)
            ) from None
        addresses = list(dict.fromkeys(a for a in (_address(str(info[4][0])) for info in found) if a is not None))
        for address in addresses:
            kind = _special_use(address, self.loopback_allowed)
            if kind is not None:
                raise DocumentRefused(
                    _("{url} resolves to {address}, {kind}: this server fetches no document there").format(
                        url=url, address=address, kind=kind
                    )
                )
        if not addresses:
            raise DocumentRefused(_("the host of {url} resolves to no address").format(url=url))
        return addresses

    async def _fetch(self, url: str, addresses: list[_Address]) -> tuple[bytes, httpx2.Headers]:
        """GET the document from the first checked address that accepts a connection, the certificate checked
        against the URL's host name; no redirect followed, no proxy, at most `MAX_DOCUMENT_BYTES` read."""
        host = urlsplit(url).hostname or ""
        refused: Exception | None = None
        async with httpx2.AsyncClient(
            verify=self._verify, timeout=self.fetch_seconds, follow_redirects=False, trust_env=False
        ) as http:
            for address in addresses:
                pinned = httpx2.URL(url).copy_with(host=str(address))
                request = http.build_request(
                    "GET",
                    pinned,
                    headers={"Accept": "application/json", "Host": httpx2.URL(url).netloc.decode("ascii")},
                    extensions={"sni_hostname": host},
                )
                try:
                    response = await http.send(request, stream=True)
                except httpx2.ConnectError as error:
                    refused = error
                    continue
                except httpx2.HTTPError as error:
                    raise _unfetched(url, error) from None
                try:
                    return await _document(url, response)
                except httpx2.HTTPError as error:
                    raise _unfetched(url, error) from None
                finally:
                    await response.aclose()
        raise _unfetched(url, refused)

    def _checked(self, url: str, body: bytes) -> OAuthClientInformationFull:
        try:
            document = json.loads(body)
        except ValueError:
            raise DocumentRefused(_("the document at {url} is not JSON").format(url=url)) from None
        if not isinstance(document, dict):
            raise DocumentRefused(_("the document at {url} is not a JSON object").format(url=url))
        if document.get("client_id") != url:
            raise DocumentRefused(
                _("the document at {url} names client_id {named!r}: it must be its own URL").format(
                    url=url, named=document.get("client_id")
                )
            )
        secrets = sorted(key for key in ("client_secret", "client_secret_expires_at") if key in document)
        if secrets:
            raise DocumentRefused(
                _("the document at {url} holds {fields}: a public document has no secret").format(
                    url=url, fields=", ".join(secrets)
                )
            )
        method = document.get("token_endpoint_auth_method", "none")
        if method in SHARED_SECRET_METHODS:
            raise DocumentRefused(
                _("the document at {url} asks for {method}, a shared secret, which no document may").format(
                    url=url, method=method
                )
            )
        if method != "none":
            raise DocumentRefused(
                _("the document at {url} asks for {method}; this server accepts only 'none'").format(
                    url=url, method=method
                )
            )
        redirects = document.get("redirect_uris")
        if not isinstance(redirects, list) or not redirects:
            raise DocumentRefused(_("the document at {url} names no redirect_uris").format(url=url))
        fields: dict[str, Any] = {"scope": self.default_scope, **document, "token_endpoint_auth_method": "none"}
        try:
            return OAuthClientInformationFull.model_validate(fields)
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise DocumentRefused(
                _("the document at {url} is not valid client metadata ({problems})").format(url=url, problems=problems)
            ) from None


async def _document(url: str, response: httpx2.Response) -> tuple[bytes, httpx2.Headers]:
    if response.is_redirect:
        raise DocumentRefused(
            _(
                "{url} answered HTTP {status}, a redirect to {location}: a client ID's document is not looked for "
                "anywhere but at the client ID"
            ).format(url=url, status=response.status_code, location=response.headers.get("location", "?"))
        )
    if response.status_code != 200:
        raise DocumentRefused(
            _("{url} answered HTTP {status}, not 200 with a document").format(url=url, status=response.status_code)
        )
    body = b""
    async for chunk in response.aiter_bytes():
        body += chunk
        if len(body) > MAX_DOCUMENT_BYTES:
            raise DocumentRefused(
                _("the document at {url} is larger than {limit} bytes").format(url=url, limit=MAX_DOCUMENT_BYTES)
            )
    return body, response.headers


def _unfetched(url: str, error: Exception | None) -> DocumentRefused:
    reason = str(error) or type(error).__name__
    return DocumentRefused(_("{url} could not be fetched: {reason}").format(url=url, reason=reason))


def _address(text: str) -> _Address | None:
    """An IP address from its text (an IPv6 zone dropped, an IPv4-mapped IPv6 address as the IPv4 one it is)."""
    try:
        address = ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return mapped or address


_PRIVATE = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")]
"""The private ranges proper (RFC 1918, and RFC 4193's unique local IPv6): the rest of RFC 6890 is not "private"."""
_NOT_GLOBAL_IPV6 = [
    ipaddress.ip_network(n)
    for n in ("::/96", "64:ff9b:1::/48", "2001::/23", "2001:db8::/32", "3fff::/20", "5f00::/16", "fec0::/10")
]
"""IPv6 ranges not reachable on the internet that Python 3.11's `is_global` misses or may miss (IANA's special-purpose
registry: IPv4-compatible, local-use NAT64, IETF protocol assignments with Teredo, documentation, and the deprecated
site-local): held here so the rule does not depend on the Python version."""
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _carried(address: _Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (IPv4-compatible, NAT64, 6to4, Teredo's server and client): a
    packet to it may reach them, so each is judged as well."""
    if not isinstance(address, ipaddress.IPv6Address):
        return []
    carried = [address.sixtofour, *(address.teredo or ())]
    low = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _NAT64 or (int(address) >> 32 == 0 and int(address) > 1):
        carried.append(low)
    return [v4 for v4 in carried if v4 is not None]


def _special_use(address: _Address, loopback_allowed: bool) -> str | None:
    """What kind of special-use address (RFC 6890) `address` is, in words, judging an IPv6 address by each IPv4
    address it carries as well; None when it may be fetched."""
    for v4 in _carried(address):
        kind = _special_use(v4, loopback_allowed)
        if kind is not None:
            return _("an IPv6 address carrying {ipv4}, {kind}").format(ipv4=v4, kind=kind)
    if address.is_loopback:
        return None if loopback_allowed else _("a loopback address, and this server does not listen on loopback")
    not_global = not address.is_global or address.is_private or address.is_reserved
    if isinstance(address, ipaddress.IPv6Address):
        not_global = not_global or address.is_site_local or any(address in net for net in _NOT_GLOBAL_IPV6)
    kinds = [
        (address.is_unspecified, _("the unspecified address")),
        (address.is_link_local, _("a link-local address")),
        (address.is_multicast, _("a multicast address")),
        (any(address in net for net in _PRIVATE), _("a private address")),
        (not_global, _("a special-use address (RFC 6890), not reachable on the internet")),
    ]
    return next((kind for special, kind in kinds if special), None)


_SHOWN_URL_CHARS = 200
"""How much of a refused client ID a refusal repeats: enough to recognise it, not a 100,000-character echo."""


def _check_url(url: str) -> None:
    """The draft's rules for a client ID URL (section 3): https, a path, no dot segments, no fragment, no user; and a
    URL the fetch can use at all (its parser's verdict, and a port from 1 to 65535), refused with the parser's reason
    rather than failing later."""
    try:
        parts = urlsplit(url)
        port = parts.port
        httpx2.URL(url)
    except (ValueError, httpx2.InvalidURL) as error:
        problem: str | None = _("it is not a usable URL ({error})").format(error=error)
    else:
        problems = [
            (parts.scheme != "https", _("it is not https")),
            (port == 0, _("its port is 0")),
            (parts.path in ("", "/"), _("it has no path")),
            (bool({".", ".."} & set(parts.path.split("/"))), _("it has a '.' or '..' path segment")),
            (bool(parts.fragment) or url.endswith("#"), _("it has a fragment")),
            (parts.username is not None or parts.password is not None, _("it names a user or password")),
        ]
        problem = next((why for broken, why in problems if broken), None)
    if problem is not None:
        shown = url if len(url) <= _SHOWN_URL_CHARS else url[:_SHOWN_URL_CHARS] + "…"
        raise DocumentRefused(
            _("client_id {url} cannot name a client ID metadata document: {problem}").format(url=shown, problem=problem)
        )


def _freshness(headers: httpx2.Headers) -> float:
    """Seconds a response may be reused without asking again (RFC 9111 section 4.2.1); 0: not at all.

    `no-store` and `no-cache` keep nothing (the lab's cache does not revalidate, so no-cache means fetch again),
    `max-age` wins over `Expires`, an `Expires` that is not a date means already expired (section 5.3)."""
    control = headers.get("cache-control", "").lower()
    if "no-store" in control or "no-cache" in control:
        return 0.0
    age = float(headers["age"]) if headers.get("age", "").isdigit() else 0.0
    if match := _MAX_AGE.search(control):
        return max(0.0, int(match.group(1)) - age)
    try:
        expires, date = parsedate_to_datetime(headers["expires"]), parsedate_to_datetime(headers["date"])
    except (KeyError, TypeError, ValueError, IndexError):
        return 0.0
    return max(0.0, (expires - date).total_seconds() - age)
