"""The lab's authorization server and the host's client website, started for lesson 09 and its checks (notebook 09)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from servers._client_documents import FETCH_SECONDS
from servers.auth import TOKEN_TTL_ENV
from servers.client_site import ANSWER_SUFFIX

from .._time_limits import scaled
from ..host import client_metadata_document
from ..processes import LabTempDir, LocalCA, ServerSpec, http_server
from ..server_contract import TRUSTED_CA_ENV

__all__ = ["HOST_DOCUMENT_PATH", "ClientSite", "authorization_server", "client_site"]

HOST_DOCUMENT_PATH = "/labkit-host/client.json"
"""Where on its website the host publishes its client ID metadata document."""


@contextmanager
def authorization_server(token_ttl: int | None = None, trusted_ca: str | Path | None = None) -> Iterator[str]:
    """The lab's authorization server (`servers/auth.py`) on 127.0.0.1, supervised like every lab server; yields
    its issuer URL (notebook 09). `token_ttl` is how many seconds an access token issued at sign-in lasts (default
    an hour; a refreshed one lasts an hour);
    `trusted_ca` the one certificate authority it trusts when it fetches a client ID metadata document
    (`ClientSite.ca_file`; default the system's), waiting for its site `FETCH_SECONDS` times `LABKIT_TIME_SCALE`."""
    env = {TOKEN_TTL_ENV: str(token_ttl)} if token_ttl is not None else {}
    if trusted_ca is not None:
        env[TRUSTED_CA_ENV] = str(trusted_ca)
    # how long it waits for a client's website: the lab's one time-limit setting, read here, not in the server
    fetch = ("--fetch-seconds", str(scaled(FETCH_SECONDS)))
    with http_server(ServerSpec("auth", args=fetch, env=env)) as url:
        # the origin alone: the authorization server's paths are its own (OAuth's), not a lab server's /mcp
        yield "{0.scheme}://{0.netloc}".format(urlsplit(url))


@dataclass
class ClientSite:
    """The host's website over HTTPS on 127.0.0.1 (`servers/client_site.py`), its certificate from a throwaway
    authority (notebook 09). `host_document` is the URL of the host's client ID metadata document, the client ID
    to sign in with (`SignIn(client_metadata_url=...)`); `ca_file` is the authority a fetcher must trust."""

    origin: str
    ca_file: Path
    folder: Path

    @property
    def host_document(self) -> str:
        return self.origin + HOST_DOCUMENT_PATH

    def publish(
        self, path: str, document: dict[str, Any] | bytes, status: int = 200, headers: dict[str, str] | None = None
    ) -> str:
        """Serve `document` (JSON, or bytes as they are) at `path` on this site, answering `status` with `headers`
        (default: 200 with the site's `Cache-Control: max-age`); returns its URL (notebook 09)."""
        target = self.folder / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        answer = target.with_name(target.name + ANSWER_SUFFIX)
        if status != 200 or headers is not None:
            answer.write_text(json.dumps({"status": status, "headers": headers}))
        else:
            answer.unlink(missing_ok=True)
        target.write_bytes(document if isinstance(document, bytes) else json.dumps(document, indent=1).encode())
        return self.origin + "/" + path.lstrip("/")


@contextmanager
def client_site(max_age: int = 300) -> Iterator[ClientSite]:
    """The host's client website (`ClientSite`), serving the host's own client ID metadata document; each document
    may be cached `max_age` seconds by whoever fetches it (notebook 09). Its authority and files are removed after."""
    authority, documents = LocalCA(), LabTempDir("client-site")
    try:
        cert, key = authority.issue("client-site")
        args = ("--folder", str(documents.path), "--cert", str(cert), "--key", str(key), "--max-age", str(max_age))
        with http_server(ServerSpec("client_site", args=args)) as url:
            site = ClientSite("https://" + urlsplit(url).netloc, authority.ca_file, documents.path)
            site.publish(HOST_DOCUMENT_PATH, client_metadata_document(site.host_document))
            yield site
    finally:
        authority.remove()
        documents.remove()
