"""Loopback traffic never goes through a proxy: the lab's servers on 127.0.0.1 are reached directly.

School and company networks set `HTTP_PROXY`/`HTTPS_PROXY`; a proxy cannot reach this machine's 127.0.0.1, so the
host's HTTP clients go direct to loopback addresses, and every server is told to (`NO_PROXY`), whatever else the
environment proxies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = ["direct_to_loopback", "no_proxy_for_loopback"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_DIRECT_TO_LOOPBACK: dict[str, None] = {"all://127.0.0.1": None, "all://localhost": None, "all://[::1]": None}
"""An httpx client's `mounts` for no proxy to loopback addresses (other addresses keep the environment's proxy)."""


def direct_to_loopback(url: str) -> dict[str, Any]:
    """An httpx client's settings for `url` (notebook 02): for a loopback address, none of the environment's proxy
    variables are read at all (httpx builds every proxy they name when the client is made, and fails for a SOCKS
    one without an extra package); for another address, its proxy is honoured, except to loopback."""
    if (urlsplit(url).hostname or "") in _LOOPBACK:
        return {"trust_env": False}
    return {"mounts": _DIRECT_TO_LOOPBACK}


def no_proxy_for_loopback(env: Mapping[str, str]) -> dict[str, str]:
    """`NO_PROXY` and `no_proxy` as a process with `env` should get them: the loopback names added to what is there."""
    given = env.get("NO_PROXY") or env.get("no_proxy") or ""
    names = [name.strip() for name in given.split(",") if name.strip()]
    value = ",".join([*names, *(name for name in _LOOPBACK if name not in names)])
    return {"NO_PROXY": value, "no_proxy": value}
