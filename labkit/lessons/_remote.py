"""The lab's authorization server, started for lesson 09 and its checks (notebook 09)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

from servers.auth import TOKEN_TTL_ENV

from ..processes import http_server

__all__ = ["authorization_server"]


@contextmanager
def authorization_server(token_ttl: int | None = None) -> Iterator[str]:
    """The lab's authorization server (`servers/auth.py`) on 127.0.0.1, supervised like every lab server; yields
    its issuer URL (notebook 09). `token_ttl` is how many seconds its access tokens last (default an hour)."""
    env = {TOKEN_TTL_ENV: str(token_ttl)} if token_ttl is not None else {}
    with http_server("auth", env=env) as url:
        # the origin alone: the authorization server's paths are its own (OAuth's), not a lab server's /mcp
        yield "{0.scheme}://{0.netloc}".format(urlsplit(url))
