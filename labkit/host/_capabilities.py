"""Which client capability a server asked for that this host does not serve, read from the call's recorded frames."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY

from ..trace import Event, Kind, Meta

__all__ = ["CAPABILITY_OF", "unserved_capability"]

CAPABILITY_OF = {"sampling/createMessage": "sampling", "roots/list": "roots", "elicitation/create": "elicitation"}
"""The client capability each server-to-client request needs."""


def unserved_capability(
    events: Iterable[Event],
    server: str,
    error: dict[str, Any],
    offered: Iterable[str],
) -> str | None:
    """The capability the failed call needed and the host does not offer: named by a -32021 error's data, by a
    request the server sent (2025-11-25), or by an `inputRequests` entry it returned (2026-07-28); else None."""
    offered = set(offered)
    if error.get("code") == MISSING_REQUIRED_CLIENT_CAPABILITY:
        required = (error.get("data") or {}).get("requiredCapabilities") or {}
        return next((name for name in required if name not in offered), None)
    for event in events:
        if event.meta.get(Meta.SERVER) != server or event.src != "server":
            continue
        for method in _asked(event):
            if CAPABILITY_OF.get(method, method) not in offered and method in CAPABILITY_OF:
                return CAPABILITY_OF[method]
    return None


def _asked(event: Event) -> list[str]:
    payload = event.payload if isinstance(event.payload, dict) else {}
    if event.kind == Kind.JSONRPC_REQUEST:
        return [str(payload.get("method"))]
    if event.kind == Kind.JSONRPC_RESPONSE:
        requests = (payload.get("result") or {}).get("inputRequests") or {}
        return [str(r.get("method")) for r in requests.values() if isinstance(r, dict)]
    return []
