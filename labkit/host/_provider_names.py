"""Tool names the model APIs accept, and the way back to each MCP name (notebook 02)."""

from __future__ import annotations

import hashlib
import re

__all__ = ["NameMap", "provider_name"]

_NAME_LIMIT = 64
_NOT_ALLOWED = re.compile(r"[^a-zA-Z0-9_-]")


def _hashed(name: str, keep: int) -> str:
    return name[:keep] + "_" + hashlib.sha256(name.encode()).hexdigest()[:8]


def provider_name(mcp_name: str) -> str:
    """A name providers accept (`^[a-zA-Z0-9_-]{1,64}$`): dots and other characters → `_` (notebook 02)."""
    name = _NOT_ALLOWED.sub("_", mcp_name) or "tool"
    return name if len(name) <= _NAME_LIMIT else _hashed(name, _NAME_LIMIT - 9)


class NameMap:
    """MCP names ↔ provider names, unique even when two MCP names sanitise alike (notebook 02)."""

    def __init__(self, mcp_names: list[str]) -> None:
        self._to_provider: dict[str, str] = {}
        for mcp_name in mcp_names:
            name = provider_name(mcp_name)
            if name in self._to_provider.values():
                name = _hashed(name, _NAME_LIMIT - 9)
            self._to_provider[mcp_name] = name
        self._to_mcp = {p: m for m, p in self._to_provider.items()}

    def provider(self, mcp_name: str) -> str:
        return self._to_provider.get(mcp_name) or provider_name(mcp_name)

    def mcp(self, name: str) -> str:
        """The MCP name behind a provider name; an unknown name comes back unchanged for the server to refuse."""
        return self._to_mcp.get(name, name)
