"""Client ID metadata documents on 127.0.0.1: the host's document served over HTTPS (a throwaway authority the lab's
authorization server is told to trust, and only it), the authorization server fetching, checking and caching it,
the host signing in with its URL as client ID; and each document or URL the authorization server refuses, with why."""

from __future__ import annotations

import contextlib
import gettext
import html
import json
import secrets
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import formatdate
from typing import Any

import anyio
import httpx2
import pytest

from labkit import GatePolicy, Host, ServerSpec, SignIn, Trace, authorization_server, http_server
from labkit._time_limits import scaled
from labkit.host import AuthorizationRefused
from labkit.host._oauth import REDIRECT_URI
from labkit.lessons import client_site
from labkit.lessons._remote import ClientSite
from labkit.processes import LocalCA, free_port
from labkit.server_contract import LANGUAGE_ENV, TRUSTED_CA_ENV
from servers._client_documents import FETCH_SECONDS, MAX_DOCUMENT_BYTES, ClientDocuments, DocumentRefused
from servers.i18n import _LOCALE_DIR

ALLOW = GatePolicy(approve_all=True)
UNREGISTERED = (
    "client_id {client_id} is not registered here: register it first (POST {endpoint}), or sign in with "
    "the HTTPS URL of a client ID metadata document"
)
SPECIAL = "a special-use address (RFC 6890), not reachable on the internet"
SINCE = {"service": "order-service", "since": "2026-10-29T20:00"}


@pytest.fixture(scope="module")
def site() -> Iterator[ClientSite]:
    with client_site() as running:
        yield running


@pytest.fixture(scope="module")
def issuer(site: ClientSite) -> Iterator[str]:
    with authorization_server(trusted_ca=site.ca_file) as url:
        yield url


@pytest.fixture(scope="module")
def logs_url(issuer: str) -> Iterator[str]:
    with http_server(ServerSpec("logs", transport="http", env={"LABKIT_AUTH_ISSUER": issuer})) as url:
        yield url


async def _allow(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"allow": True}


async def _authorize(issuer: str, client_id: str, method: str = "GET") -> httpx2.Response:
    """The first step of a sign-in, as the user's browser makes it: the authorization request, not followed (a form
    POSTed with `method="POST"`, as the endpoint also accepts)."""
    params = {
        "client_id": client_id,
        "response_type": "code",
        "redirect_uri": REDIRECT_URI,
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "state": "s",
        "scope": "read",
    }
    async with httpx2.AsyncClient(timeout=30 + scaled(FETCH_SECONDS)) as browser:  # it may wait out a fetch
        if method == "POST":
            return await browser.post(f"{issuer}/authorize", data=params)
        return await browser.get(f"{issuer}/authorize", params=params)


async def _consent_page(issuer: str, client_id: str) -> str:
    answer = await _authorize(issuer, client_id)
    assert answer.status_code == 302, answer.text
    async with httpx2.AsyncClient(timeout=30) as browser:
        return (await browser.get(answer.headers["location"])).text


async def test_a_host_signs_in_with_its_client_id_metadata_document(
    site: ClientSite, issuer: str, logs_url: str
) -> None:
    sign_in = SignIn(_allow, user="alice", client_metadata_url=site.host_document)
    trace = Trace()
    with anyio.fail_after(60):
        async with Host(trace, [ServerSpec("logs", url=logs_url)], sign_in=sign_in, policy=ALLOW) as host:
            result = await host.call("query_errors", SINCE)
    assert not result.is_error and json.loads(result.text)["total"] > 0
    auth_paths = [e.payload["path"] for e in trace if e.kind == "http.request" and e.dst == "auth"]
    assert "/register" not in auth_paths and "/token" in auth_paths  # no registration: the URL is the client ID
    token = sign_in.stores["logs"].tokens
    assert token is not None
    async with httpx2.AsyncClient() as http:
        claims = (await http.post(f"{issuer}/introspect", data={"token": token.access_token})).json()
        metadata = (await http.get(f"{issuer}/.well-known/oauth-authorization-server")).json()
    assert claims["active"] and claims["client_id"] == site.host_document and claims["sub"] == "alice"
    assert metadata["client_id_metadata_document_supported"] is True
    # the consent page names the client as its document does, and by the URL that says who publishes it
    page = await _consent_page(issuer, site.host_document)
    assert "<b>labkit-host (described at " + html.escape(site.host_document) + ")</b>" in page


async def test_a_document_is_cached_as_long_as_its_max_age_says(site: ClientSite, issuer: str) -> None:
    url = f"{site.origin}/cached/client.json"
    site.publish("cached/client.json", {"client_id": url, "client_name": "first", "redirect_uris": [REDIRECT_URI]})
    assert ">first (described at" in await _consent_page(issuer, url)
    site.publish("cached/client.json", {"client_id": url, "client_name": "second", "redirect_uris": [REDIRECT_URI]})
    assert ">first (described at" in await _consent_page(issuer, url)  # the site said max-age=300


def _refusals(site: ClientSite) -> dict[str, tuple[str, str]]:
    """Each client ID the authorization server must refuse, and a word of the reason it must give."""
    other = "https://elsewhere.example/client.json"
    mismatched = site.publish("mismatched.json", {"client_id": other, "redirect_uris": [REDIRECT_URI]})
    oversized_url = f"{site.origin}/oversized.json"
    padding = "x" * MAX_DOCUMENT_BYTES
    site.publish("oversized.json", {"client_id": oversized_url, "redirect_uris": [REDIRECT_URI], "logo": padding})
    with_secret_url = f"{site.origin}/secret.json"
    site.publish("secret.json", {"client_id": with_secret_url, "redirect_uris": [REDIRECT_URI], "client_secret": "s"})
    return {
        "client_id differs": (mismatched, repr(other)),
        "http URL": (site.host_document.replace("https://", "http://"), "not https"),
        "unreachable": (f"https://127.0.0.1:{free_port()}/client.json", "could not be fetched"),
        "oversized": (oversized_url, f"larger than {MAX_DOCUMENT_BYTES} bytes"),
        "holds a secret": (with_secret_url, "client_secret"),
    }


async def test_each_unusable_client_id_url_is_refused_with_its_reason(site: ClientSite, issuer: str) -> None:
    refused = {}
    for case, (client_id, reason) in _refusals(site).items():
        answer = await _authorize(issuer, client_id)
        body = answer.json()
        refused[case] = (answer.status_code, body["error"], client_id in body["error_description"])
        assert reason in body["error_description"], (case, body)
    assert refused == dict.fromkeys(refused, (400, "invalid_client", True))


async def test_the_host_says_why_the_authorization_server_refused_its_document(
    site: ClientSite, issuer: str, logs_url: str
) -> None:
    other = "https://elsewhere.example/client.json"
    url = site.publish("host-mismatched.json", {"client_id": other, "redirect_uris": [REDIRECT_URI]})
    trace = Trace()
    with anyio.fail_after(60), pytest.raises(AuthorizationRefused) as caught:
        async with Host(trace, [ServerSpec("logs", url=logs_url)], sign_in=SignIn(_allow, client_metadata_url=url)):
            pass
    assert caught.value.server == "logs" and caught.value.error == "invalid_client"
    assert repr(other) in caught.value.description and caught.value.authority == issuer.split("//")[1]
    [refusal] = [e for e in trace if e.kind == "auth.refused"]
    assert refusal.payload["error"] == "invalid_client" and refusal.payload["status"] == 400
    assert not [e for e in trace if e.kind == "http.request" and e.payload["path"] == "/token"]


async def test_a_certificate_from_an_authority_it_was_not_told_to_trust_is_refused(site: ClientSite) -> None:
    with authorization_server() as trusting_the_system:  # the system's authorities only: the lab's is not one
        answer = await _authorize(trusting_the_system, site.host_document)
    assert answer.status_code == 400 and "CERTIFICATE_VERIFY_FAILED" in answer.json()["error_description"]


def _named(site: ClientSite, path: str, name: str, headers: dict[str, str] | None = None) -> str:
    url = f"{site.origin}/{path}"
    return site.publish(path, {"client_id": url, "client_name": name, "redirect_uris": [REDIRECT_URI]}, 200, headers)


@pytest.mark.parametrize(
    ("headers", "kept"),
    [
        ({"Cache-Control": "no-store"}, False),
        ({"Cache-Control": "no-cache"}, False),
        ({"Cache-Control": "max-age=300, no-cache"}, False),  # no-cache wins: the lab's cache never revalidates
        ({"Expires": "in five minutes"}, True),  # no max-age: Expires against the response's Date
        ({"Expires": "five minutes ago"}, False),
        ({"Expires": "0"}, False),  # not a date: already expired (RFC 9111 section 5.3)
        ({"Cache-Control": "max-age=0", "Expires": "in five minutes"}, False),  # max-age wins over Expires
        ({"Cache-Control": "max-age=300", "Age": "300"}, False),  # a cache upstream already kept it that long
        ({}, False),  # no freshness information: nothing is kept
    ],
    ids=[
        "no-store",
        "no-cache",
        "no-cache beside max-age",
        "Expires ahead",
        "Expires past",
        "Expires invalid",
        "max-age=0 over Expires",
        "Age used up",
        "no headers",
    ],
)
async def test_a_document_is_kept_only_as_its_caching_headers_allow(
    site: ClientSite, issuer: str, headers: dict[str, str], kept: bool
) -> None:
    dates = {
        "in five minutes": formatdate(time.time() + 300, usegmt=True),
        "five minutes ago": formatdate(time.time() - 300, usegmt=True),
    }
    sent = {name: dates.get(value, value) for name, value in headers.items()}
    path = f"caching/{secrets.token_hex(8)}.json"
    url = _named(site, path, "first", sent)
    assert ">first (described at" in await _consent_page(issuer, url)
    _named(site, path, "second", sent)
    shown = "first" if ">first (described at" in await _consent_page(issuer, url) else "second"
    assert shown == ("first" if kept else "second")


async def test_a_refused_document_is_not_kept(site: ClientSite, issuer: str) -> None:
    url = f"{site.origin}/fixed/client.json"
    site.publish("fixed/client.json", {"client_id": "https://elsewhere.example/", "redirect_uris": [REDIRECT_URI]})
    assert (await _authorize(issuer, url)).status_code == 400
    _named(site, "fixed/client.json", "fixed")  # the site's default max-age=300 applies to the refused one too
    assert ">fixed (described at" in await _consent_page(issuer, url)


@pytest.mark.parametrize(
    ("host", "address", "kind"),
    [
        ("10.0.0.1", "10.0.0.1", "a private address"),
        ("167772161", "10.0.0.1", "a private address"),  # the same address written as one number
        ("0x0a000001", "10.0.0.1", "a private address"),  # and in hexadecimal
        ("169.254.169.254", "169.254.169.254", "a link-local address"),  # a cloud's metadata service
        ("[::ffff:192.168.1.1]", "192.168.1.1", "a private address"),  # IPv4 inside IPv6
        ("[fd00::1]", "fd00::1", "a private address"),  # IPv6 unique local
        ("[fe80::1]", "fe80::1", "a link-local address"),
        ("0.0.0.0", "0.0.0.0", "the unspecified address"),  # on Linux it reaches this machine's own services
        ("100.64.0.1", "100.64.0.1", SPECIAL),  # carrier-grade NAT's shared space: not private, not global
        ("224.0.0.1", "224.0.0.1", "a multicast address"),
        # not private, and not called so: documentation, benchmarking, reserved, broadcast, "this network", Teredo
        ("192.0.2.1", "192.0.2.1", SPECIAL),
        ("[2001:db8::1]", "2001:db8::1", SPECIAL),
        ("198.18.0.1", "198.18.0.1", SPECIAL),
        ("240.0.0.1", "240.0.0.1", SPECIAL),
        ("255.255.255.255", "255.255.255.255", SPECIAL),
        ("0.1.2.3", "0.1.2.3", SPECIAL),
        ("[2001:0:4136:e378:8000:63bf:f7f7:f7f7]", "2001:0:4136:e378:8000:63bf:f7f7:f7f7", SPECIAL),  # Teredo
        # IPv6 addresses carrying an IPv4 one are judged by it as well: compatible, NAT64, 6to4
        ("[::192.0.2.2]", "::c000:202", f"an IPv6 address carrying 192.0.2.2, {SPECIAL}"),
        ("[64:ff9b::c000:202]", "64:ff9b::c000:202", f"an IPv6 address carrying 192.0.2.2, {SPECIAL}"),
        ("[2002:c000:202::1]", "2002:c000:202::1", f"an IPv6 address carrying 192.0.2.2, {SPECIAL}"),
        ("[2002:a00:1::1]", "2002:a00:1::1", "an IPv6 address carrying 10.0.0.1, a private address"),
        (
            "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",
            "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            f"an IPv6 address carrying 192.0.2.45, {SPECIAL}",
        ),
        ("[64:ff9b:1::a00:1]", "64:ff9b:1::a00:1", SPECIAL),  # NAT64 for local use (RFC 8215)
        ("[::8.8.8.8]", "::808:808", SPECIAL),  # IPv4-compatible is deprecated whatever it carries
        ("[fec0::1]", "fec0::1", SPECIAL),  # the old site-local, which Python 3.11 calls global
    ],
)
async def test_a_client_id_resolving_to_a_special_use_address_is_refused_before_any_connection(
    issuer: str, host: str, address: str, kind: str
) -> None:
    client_id = f"https://{host}/client.json"
    answer = await _authorize(issuer, client_id)
    body = answer.json()
    assert (answer.status_code, body["error"]) == (400, "invalid_client")
    assert f"{client_id} resolves to {address}, {kind}" in body["error_description"], body


@pytest.mark.parametrize(
    ("client_id", "reason"),
    [
        ("https://\uff11\uff12\uff17.0.0.2:{port}/client.json", "Invalid IDNA hostname"),  # full-width digits
        ("https://127.0.0.1:65536/client.json", "Port out of range"),
        ("https://127.0.0.1:99999/client.json", "Port out of range"),
        ("https://127.0.0.1:abc/client.json", "Port could not be cast"),
        ("https://127.0.0.1:0/client.json", "its port is 0"),
        ("https://127.0.0.1:{port}/client.json\r\nX-Injected: 1", "non-printable"),
        ("https://127.0.0.1:{port}/" + "x" * 100_000, "URL too long"),
        ("https://[::1/client.json", "Invalid IPv6 URL"),
    ],
    ids=["full-width digits", "port 65536", "port 99999", "port abc", "port 0", "CR LF", "100,000 chars", "bracket"],
)
async def test_a_client_id_url_that_does_not_parse_is_refused_naming_why(
    issuer: str, client_id: str, reason: str
) -> None:
    client_id = client_id.replace("{port}", issuer.rsplit(":", 1)[1])
    answer = await _authorize(issuer, client_id, method="POST")  # a form: no request-line limit in the way
    body = answer.json()
    assert (answer.status_code, body["error"]) == (400, "invalid_client"), answer.text[:300]
    assert "cannot name a client ID metadata document" in body["error_description"]
    assert reason in body["error_description"] and len(body["error_description"]) < 1000


async def test_loopback_is_fetched_only_by_an_authorization_server_that_listens_on_loopback(
    site: ClientSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The draft's one exception, the lab's development setting: the AS on 127.0.0.1 may fetch from 127.0.0.1; the
    same code told it listens elsewhere refuses (the real AS always listens on loopback, so this drives the class)."""
    by_name = site.origin.replace("127.0.0.1", "localhost") + "/by-name/client.json"
    site.publish("by-name/client.json", {"client_id": by_name, "redirect_uris": [REDIRECT_URI]})
    monkeypatch.setenv(TRUSTED_CA_ENV, str(site.ca_file))  # as the lab starts its authorization server
    on_loopback = ClientDocuments("read", scaled(FETCH_SECONDS), own_host="127.0.0.1")
    elsewhere = ClientDocuments("read", scaled(FETCH_SECONDS), own_host="192.0.2.10")
    accepted = await on_loopback.client(by_name)  # a name resolved, the certificate checked against the name
    with pytest.raises(DocumentRefused) as refused:
        await elsewhere.client(site.host_document)
    assert accepted.client_id == by_name
    assert "resolves to 127.0.0.1, a loopback address, and this server does not listen on loopback" in str(
        refused.value
    )


async def test_a_redirect_is_not_followed(site: ClientSite, issuer: str) -> None:
    moved = site.publish("moved/client.json", b"", 302, {"Location": site.host_document})  # to a good document
    answer = await _authorize(issuer, moved)
    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_client")
    assert f"answered HTTP 302, a redirect to {site.host_document}" in answer.json()["error_description"]


async def test_a_site_that_never_answers_is_given_up_on_with_the_time_it_was_given(issuer: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts connections (the kernel does), answers nothing
        client_id = f"https://127.0.0.1:{silent.getsockname()[1]}/client.json"
        answer = await _authorize(issuer, client_id)
    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_client")
    assert f"{client_id} did not answer within" in answer.json()["error_description"]


async def test_refusals_and_the_consent_page_speak_the_learners_language(
    site: ClientSite, monkeypatch: pytest.MonkeyPatch
) -> None:
    chinese = gettext.translation("labkit", _LOCALE_DIR, languages=["zh_CN"])
    monkeypatch.setenv(LANGUAGE_ENV, "zh_CN")
    with authorization_server(trusted_ca=site.ca_file) as zh_issuer:
        refused = await _authorize(zh_issuer, site.host_document.replace("https://", "http://"))
        unknown = await _authorize(zh_issuer, "never-registered")
        page = await _consent_page(zh_issuer, site.host_document)
    why = chinese.gettext("it is not https")
    assert why != "it is not https" and refused.json()["error"] == "invalid_client"  # the wire code stays the RFC's
    assert why in refused.json()["error_description"]
    not_registered = chinese.gettext(UNREGISTERED).format(
        client_id="never-registered", endpoint=f"{zh_issuer}/register"
    )
    assert chinese.gettext(UNREGISTERED) != UNREGISTERED and unknown.json() == {
        "error": "invalid_request",  # the SDK's code for a client it does not know
        "error_description": not_registered,
    }
    for english in ("Sign in and consent", "Allow", "Deny"):
        assert chinese.gettext(english) != english and html.escape(chinese.gettext(english)) in page


@contextmanager
def _trickling_site() -> Iterator[tuple[str, LocalCA]]:
    """An HTTPS site that answers 200 at once, then sends its document a byte every 0.2 s: each read is quick, the
    whole never ends in time (only a deadline on the whole fetch stops it)."""
    authority = LocalCA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*authority.issue("trickling"))
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        with contextlib.suppress(OSError), context.wrap_socket(listener.accept()[0], server_side=True) as tls:
            tls.recv(4096)
            tls.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n")
            while not stop.wait(0.2):
                tls.sendall(b" ")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}/client.json", authority
    finally:
        stop.set()
        listener.close()
        thread.join(5)
        authority.remove()


async def test_a_site_that_trickles_its_document_is_given_up_on_at_the_fetch_deadline() -> None:
    with _trickling_site() as (client_id, authority), authorization_server(trusted_ca=authority.ca_file) as issuer:
        answer = await _authorize(issuer, client_id)
    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_client")
    assert f"{client_id} did not answer within" in answer.json()["error_description"]


@contextmanager
def _counting_site() -> Iterator[tuple[str, LocalCA, list[str]]]:
    """An HTTPS site serving a valid document it forbids anyone to keep (`no-store`), recording each request."""
    authority = LocalCA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*authority.issue("counting"))
    listener = socket.create_server(("127.0.0.1", 0))
    url = f"https://127.0.0.1:{listener.getsockname()[1]}/client.json"
    body = json.dumps({"client_id": url, "client_name": "counted", "redirect_uris": [REDIRECT_URI]}).encode()
    requests: list[str] = []

    def serve() -> None:
        while True:
            with contextlib.suppress(OSError, ssl.SSLError):
                connection = listener.accept()[0]
                with context.wrap_socket(connection, server_side=True) as tls:
                    requests.append(tls.recv(4096).decode(errors="replace").split("\r\n")[0])
                    head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n"
                    tls.sendall(f"{head}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
                continue
            return  # the listener is closed

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield url, authority, requests
    finally:
        listener.close()
        thread.join(5)
        authority.remove()


async def test_a_document_not_kept_is_fetched_once_per_authorization_request() -> None:
    """The SDK's handler asks the provider for the client after the lab's check: without the check's answer kept for
    the request, a `no-store` document is fetched twice, and two different answers make a puzzling refusal."""
    with _counting_site() as (url, authority, requests), authorization_server(trusted_ca=authority.ca_file) as issuer:
        first = await _authorize(issuer, url)
        second = await _authorize(issuer, url)
    assert (first.status_code, second.status_code) == (302, 302), first.text
    assert requests == ["GET /client.json HTTP/1.1"] * 2  # one fetch each: not kept between them, not twice in one


async def test_an_unregistered_client_id_is_refused_naming_it_and_the_ways_to_sign_in(issuer: str) -> None:
    answer = await _authorize(issuer, "never-registered")
    assert answer.json() == {
        "error": "invalid_request",
        "error_description": UNREGISTERED.format(client_id="never-registered", endpoint=f"{issuer}/register"),
    }
