"""A secret per lab HTTP server, in its URL, so that only the host that started it can call it (a shared loopback)."""

from __future__ import annotations

import secrets

from ..server_contract import AUTH_ISSUER_ENV, HOST_SECRET_ENV

__all__ = ["HOST_SECRET_ENV", "HOST_SECRET_PARAM", "with_host_secret"]

HOST_SECRET_PARAM = "host_secret"
"""The URL's query parameter carrying it, as Jupyter's `?token=` does: any MCP client sends it unchanged."""


def with_host_secret(url: str, env: dict[str, str]) -> str:
    """`url` with a new secret the server started with `env` will demand (placed in `env`), unless OAuth guards it."""
    # A server protected by OAuth (notebook 09): its tokens, bound to its URL as audience, decide who calls.
    if AUTH_ISSUER_ENV in env:
        return url
    env[HOST_SECRET_ENV] = secret = secrets.token_urlsafe(32)
    return f"{url}?{HOST_SECRET_PARAM}={secret}"
