"""The host's networking variables a server from elsewhere needs to reach the internet: CA bundles and proxies."""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit

__all__ = ["CA_VARIABLES", "PROXY_VARIABLES", "network_env"]

CA_VARIABLES = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "PIP_CERT",
    "UV_NATIVE_TLS",
)
"""Where a program finds the certificate authorities it trusts (Python's ssl, requests/httpx, curl, Node, pip, uv)."""
PROXY_VARIABLES = tuple(
    name for base in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY") for name in (base, base.lower())
)
"""The proxy a program goes through, and the hosts it reaches directly; both spellings, as programs read either."""


def network_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The CA and proxy variables of `environ` (the host's by default) that a foreign server is given (notebook 08).

    They are settings, not secrets, with one exception: a proxy URL with a user and password in it
    (`http://user:secret@proxy:3128`) is a credential, so it is not passed on; such a server must be
    given it by name in its own `env`.
    """
    environ = os.environ if environ is None else environ
    passed = {name: environ[name] for name in CA_VARIABLES if name in environ}
    passed.update(
        {name: environ[name] for name in PROXY_VARIABLES if name in environ and not _has_credentials(environ[name])}
    )
    return passed


def _has_credentials(value: str) -> bool:
    if "://" not in value:  # NO_PROXY's host list, or a proxy given as host:port
        return "@" in value
    try:
        return urlsplit(value).password is not None or urlsplit(value).username is not None
    except ValueError:
        return True  # unreadable: not passed, since it cannot be shown to be free of a password
