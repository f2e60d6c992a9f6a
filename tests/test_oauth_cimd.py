"""Client ID metadata documents on 127.0.0.1: the host's document served over HTTPS (a throwaway authority the lab's
authorization server is told to trust, and only it), the authorization server fetching, checking and caching it,
the host signing in with its URL as client ID; and each document or URL the authorization server refuses, with why."""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2
import pytest

from labkit import GatePolicy, Host, ServerSpec, SignIn, Trace, authorization_server, http_server
from labkit.host import AuthorizationRefused
from labkit.host._oauth import REDIRECT_URI
from labkit.lessons import client_site
from labkit.lessons._remote import ClientSite
from labkit.processes import free_port
from servers._client_documents import MAX_DOCUMENT_BYTES

ALLOW = GatePolicy(approve_all=True)
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


async def _authorize(issuer: str, client_id: str) -> httpx2.Response:
    """The first step of a sign-in, as the user's browser makes it: the authorization request, not followed."""
    params = {
        "client_id": client_id,
        "response_type": "code",
        "redirect_uri": REDIRECT_URI,
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256",
        "state": "s",
        "scope": "read",
    }
    async with httpx2.AsyncClient(timeout=30) as browser:
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
