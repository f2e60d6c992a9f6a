"""Loopback traffic never goes through a proxy: the lab's servers on 127.0.0.1 are reached directly.

School and company networks set `HTTP_PROXY`/`HTTPS_PROXY`; a proxy cannot reach this machine's 127.0.0.1, so the
host's HTTP clients go direct to loopback addresses, and every server is told to (`NO_PROXY`), whatever else the
environment proxies.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["DIRECT_TO_LOOPBACK", "no_proxy_for_loopback"]

_LOOPBACK = ("127.0.0.1", "localhost", "::1")
DIRECT_TO_LOOPBACK: dict[str, None] = {"all://127.0.0.1": None, "all://localhost": None, "all://[::1]": None}
"""An httpx client's `mounts` for no proxy to loopback addresses (other addresses keep the environment's proxy)."""


def no_proxy_for_loopback(env: Mapping[str, str]) -> dict[str, str]:
    """`NO_PROXY` and `no_proxy` as a process with `env` should get them: the loopback names added to what is there."""
    given = env.get("NO_PROXY") or env.get("no_proxy") or ""
    names = [name.strip() for name in given.split(",") if name.strip()]
    value = ",".join([*names, *(name for name in _LOOPBACK if name not in names)])
    return {"NO_PROXY": value, "no_proxy": value}
