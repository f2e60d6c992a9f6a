"""Desktop hosts' and editors' MCP configs (JSONC, variables, inputs, envFile) read into `ServerSpec`s (notebook 08)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import json5
from dotenv import dotenv_values

from .._i18n import _, listing
from ..processes import ServerSpec
from ._variables import ConfigError, Variables, input_ids

__all__ = ["CONFIG_KEYS", "ConfigError", "McpConfig", "load_config", "read_config", "specs_from_config"]

CONFIG_KEYS = ("mcpServers", "servers")
"""Claude Desktop, Cursor, Windsurf and Claude Code use `mcpServers`; VS Code's `.vscode/mcp.json` uses `servers`."""
_TYPES = ("stdio", "http", "sse")
_USED = {"type", "command", "args", "env", "envFile", "cwd", "url", "serverUrl", "headers", "disabled"}
_DISPLAY_ONLY = {"description", "gallery", "version", "autoApprove", "alwaysAllow"}
"""Keys that change only how an editor shows a server or how often it asks: the lab's host shows all and asks anyway."""
_EDITOR_FOLDERS = (".vscode", ".cursor", ".windsurf", ".claude")
_INPUT_TYPES = ("promptString", "pickString")


@dataclass(frozen=True)
class McpConfig:
    """One config file as read: its enabled entries, the names of those `disabled`, its `inputs`, its workspace."""

    source: str
    entries: Mapping[str, Mapping[str, Any]]
    disabled: tuple[str, ...]
    inputs: Mapping[str, Mapping[str, Any]]
    workspace: Path

    def needed_inputs(self) -> list[str]:
        """The ids of the `${input:id}`s the enabled servers use, each once, in order."""
        found: dict[str, None] = {}
        for name, entry in self.entries.items():
            for text in _strings_in(entry):
                for id_ in input_ids(text):
                    if id_ not in self.inputs:
                        raise ConfigError(
                            _(
                                "{source}: server {name!r} uses ${{input:{id}}}, which the config's "
                                '"inputs" do not declare'
                            ).format(source=self.source, name=name, id=id_)
                        )
                    found[id_] = None
        return list(found)

    def input_form(self, ids: list[str]) -> tuple[str, dict[str, Any]]:
        """The message and schema of one form asking for the inputs `ids` (VS Code asks them one by one)."""
        properties = {}
        for id_ in ids:
            declared = self.inputs[id_]
            field: dict[str, Any] = {"type": "string", "title": declared.get("description") or id_}
            if declared.get("type") == "pickString":
                field["enum"] = [o["value"] if isinstance(o, dict) else o for o in declared.get("options", [])]
            if "default" in declared:
                field["default"] = declared["default"]
            if declared.get("password"):
                field["writeOnly"] = True
            properties[id_] = field
        message = _("The MCP config {source} needs values for its servers: {ids}").format(
            source=self.source, ids=listing(ids)
        )
        return message, {"type": "object", "properties": properties, "required": list(ids)}

    def specs(
        self, answers: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
    ) -> list[ServerSpec]:
        """A `ServerSpec` for every enabled server, with its variables expanded."""
        variables = Variables(self.workspace, dict(os.environ if environ is None else environ), dict(answers or {}))
        return [
            _spec(name, entry, f"{self.source}: server {name!r}", variables) for name, entry in self.entries.items()
        ]


def read_config(path: str | Path, *, workspace: str | Path | None = None) -> McpConfig:
    """An MCP config file, JSON with comments and trailing commas allowed (JSONC), checked (notebook 08).

    `workspace` is what `${workspaceFolder}` means: by default the folder holding the config, or its
    parent when the config sits in an editor's folder (`.vscode/mcp.json`, `.cursor/mcp.json`).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(_("no MCP config file at {path}").format(path=path)) from None
    try:
        document = json5.loads(text)
    except ValueError as error:
        raise ConfigError(
            _("{path} is not valid JSON (comments and trailing commas are allowed): {error}").format(
                path=path, error=error
            )
        ) from None
    if workspace is None:
        folder = path.resolve().parent
        workspace = folder.parent if folder.name in _EDITOR_FOLDERS else folder
    return parse_config(document, source=str(path), workspace=Path(workspace))


def parse_config(document: Any, *, source: str, workspace: Path) -> McpConfig:
    servers = next((document[key] for key in CONFIG_KEYS if isinstance(document, dict) and key in document), None)
    if not isinstance(servers, dict):
        raise ConfigError(
            _("{source} has no {keys} object").format(source=source, keys=_(" or ").join(repr(k) for k in CONFIG_KEYS))
        )
    entries, disabled = {}, []
    for name, entry in servers.items():
        where = f"{source}: server {name!r}"
        if not isinstance(entry, dict):
            raise ConfigError(_("{where} must be an object, not {type}").format(where=where, type=type(entry).__name__))
        if entry.get("disabled") is True:
            disabled.append(name)  # never checked further: a disabled entry whose program is gone stops nothing
            continue
        _check_keys(entry, where)
        entries[name] = entry
    return McpConfig(source, entries, tuple(disabled), _inputs(document.get("inputs", []), source), workspace)


def load_config(
    path: str | Path, *, inputs: Mapping[str, str] | None = None, workspace: str | Path | None = None
) -> list[ServerSpec]:
    """Every enabled server in an MCP config file, in its order; `inputs` answers its `${input:id}`s (notebook 08)."""
    return read_config(path, workspace=workspace).specs(inputs)


def specs_from_config(
    document: Any,
    *,
    source: str = "the config",
    inputs: Mapping[str, str] | None = None,
    workspace: str | Path | None = None,
) -> list[ServerSpec]:
    """The `ServerSpec`s of an already parsed config (a dict), as `load_config` reads them."""
    return parse_config(document, source=source, workspace=Path(workspace or Path.cwd())).specs(inputs)


def _check_keys(entry: Mapping[str, Any], where: str) -> None:
    unknown = sorted(set(entry) - _USED - _DISPLAY_ONLY)
    if unknown:
        raise ConfigError(
            _("{where}: the lab's host does not support {keys}; it reads {known}").format(
                where=where, keys=listing(repr(k) for k in unknown), known=listing(sorted(_USED))
            )
        )
    kind = entry.get("type")
    if kind is not None and kind not in _TYPES:
        raise ConfigError(
            _("{where}: type {kind!r} is not supported; the lab's host connects to {types}").format(
                where=where, kind=kind, types=listing(_TYPES)
            )
        )
    if "disabled" in entry and not isinstance(entry["disabled"], bool):
        raise ConfigError(_("{where}: 'disabled' must be true or false").format(where=where))


def _inputs(declared: Any, source: str) -> dict[str, Mapping[str, Any]]:
    if not isinstance(declared, list):
        raise ConfigError(_('{source}: "inputs" must be a list').format(source=source))
    inputs: dict[str, Mapping[str, Any]] = {}
    for item in declared:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise ConfigError(_('{source}: every input needs an "id"').format(source=source))
        if item.get("type") not in _INPUT_TYPES:
            raise ConfigError(
                _("{source}: input {id!r} has type {type!r}; the lab's host asks only {types}").format(
                    source=source, id=item["id"], type=item.get("type"), types=listing(_INPUT_TYPES)
                )
            )
        inputs[item["id"]] = item
    return inputs


def _spec(name: str, entry: Mapping[str, Any], where: str, variables: Variables) -> ServerSpec:
    def text(key: str) -> str:
        value = entry[key]
        if not isinstance(value, str) or not value:
            raise ConfigError(_("{where}: {key!r} must be a non-empty string").format(where=where, key=key))
        return variables.expand(value, f"{where}, {key!r}")

    url_key = "url" if "url" in entry else "serverUrl" if "serverUrl" in entry else None
    if url_key is not None:
        if "command" in entry:
            raise ConfigError(_("{where}: give a 'command' or a URL, not both").format(where=where))
        transport = "sse" if entry.get("type") == "sse" else "http"
        return ServerSpec(
            name,
            transport=transport,
            url=text(url_key),
            headers=_mapping(entry.get("headers"), where, "headers", variables),
        )
    if "command" not in entry:
        raise ConfigError(
            _("{where} needs a 'command' (a program to start) or a 'url' (a running server)").format(where=where)
        )
    if entry.get("type") in ("http", "sse"):
        raise ConfigError(_("{where}: type {kind!r} needs a 'url'").format(where=where, kind=entry["type"]))
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ConfigError(_("{where}: 'args' must be a list of strings").format(where=where))
    env = _env_file(variables.workspace / text("envFile"), where) if "envFile" in entry else {}
    env.update(_mapping(entry.get("env"), where, "env", variables))
    return ServerSpec(
        name,
        command=text("command"),
        args=tuple(variables.expand(a, f"{where}, 'args'") for a in args),
        env=env,
        cwd=text("cwd") if entry.get("cwd") else None,
    )


def _mapping(value: Any, where: str, key: str, variables: Variables) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(v, str) for v in value.values()):
        raise ConfigError(_("{where}: 'env' and 'headers' must map names to strings").format(where=where))
    return {name: variables.expand(v, f"{where}, {key}.{name}") for name, v in value.items()}


def _env_file(path: Path, where: str) -> dict[str, str]:
    """A dotenv file (`KEY=value` lines, `#` comments, quotes) as python-dotenv reads it, values taken as written;
    a relative path is in the workspace."""
    if not path.is_file():
        raise ConfigError(_("{where}: its envFile {path} does not exist").format(where=where, path=path))
    return {k: v for k, v in dotenv_values(path, interpolate=False).items() if v is not None}


def _strings_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for v in value.values() for s in _strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings_in(v)]
    return []
