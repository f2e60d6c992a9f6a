"""The `mcpServers` files desktop hosts and editors use, read into `ServerSpec`s (notebook 08)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ._spec import ServerSpec

__all__ = ["CONFIG_KEYS", "load_config", "specs_from_config"]

CONFIG_KEYS = ("mcpServers", "servers")
"""Claude Desktop, Cursor and most hosts use `mcpServers`; VS Code's `mcp.json` uses `servers`."""


def load_config(path: str | Path) -> list[ServerSpec]:
    """Every server in an `mcpServers` JSON file, in its order; a bad entry raises an error naming it (notebook 08)."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"no MCP config file at {path}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    return specs_from_config(document, source=str(path))


def specs_from_config(document: Any, *, source: str = "the config") -> list[ServerSpec]:
    """The `ServerSpec`s of an already parsed config: `command`/`args`/`env`/`cwd` or `url`/`headers` entries."""
    servers = next((document[key] for key in CONFIG_KEYS if isinstance(document, dict) and key in document), None)
    if not isinstance(servers, dict):
        raise ValueError(f"{source} has no {' or '.join(repr(k) for k in CONFIG_KEYS)} object")
    return [_spec(name, entry, source) for name, entry in servers.items()]


def _spec(name: str, entry: Any, source: str) -> ServerSpec:
    where = f"{source}: server {name!r}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object, not {type(entry).__name__}")
    if "url" in entry:
        return ServerSpec(name, url=_text(entry["url"], where, "url"), headers=_strings(entry.get("headers"), where))
    if "command" not in entry:
        raise ValueError(f"{where} needs a 'command' (a program to start) or a 'url' (a running server)")
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f"{where}: 'args' must be a list of strings")
    cwd = entry.get("cwd")
    return ServerSpec(name, command=_text(entry["command"], where, "command"), args=tuple(args),
                      env=_strings(entry.get("env"), where), cwd=_text(cwd, where, "cwd") if cwd else None)


def _text(value: Any, where: str, key: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}: {key!r} must be a non-empty string")
    return value


def _strings(value: Any, where: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"{where}: 'env' and 'headers' must map names to strings")
    return dict(value)
