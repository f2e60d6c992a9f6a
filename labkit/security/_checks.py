"""Checks on each proposed call and each listing: paths, secrets in arguments, untrusted annotations."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mcp_types import Tool

from labkit._i18n import _, clauses

from ..host import Guard
from ..trace import Kind, Outcome, Trace

__all__ = ["PATH_ARGUMENTS", "EgressGuard", "HintsGuard", "PathGuard", "host_secrets"]

PATH_ARGUMENTS = ("path", "file", "filename", "file_path", "directory", "dir", "folder", "source", "destination")
_SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY|CREDENTIAL|_KEY$", re.I)
_PRIVATE_KEY = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_KEY_BLOCK = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|(?=\"))", re.S)
_REDACTED = "[withheld by the host]"
_MIN_SECRET = 8


def host_secrets(environ: dict[str, str] | None = None) -> list[str]:
    """Values of the host's environment variables whose names say they are secret (notebook 07)."""
    environ = dict(os.environ) if environ is None else environ
    return sorted({v for k, v in environ.items() if _SECRET_NAME.search(k) and len(v) >= _MIN_SECRET})


def _hints(tool: Tool) -> str:
    assert tool.annotations is not None
    claims = tool.annotations.model_dump(exclude_none=True, by_alias=True)
    return ", ".join(f"{key}={json.dumps(value)}" for key, value in claims.items())


class HintsGuard(Guard):
    """Drops untrusted servers' annotations, so a `readOnlyHint` cannot skip a person's approval (notebook 07).

    The spec: clients MUST consider tool annotations untrusted unless they come from trusted servers.
    """

    def __init__(self, trace: Trace, trusted: Callable[[str], bool]) -> None:
        self.trace, self.trusted = trace, trusted

    async def on_list(self, server: str, tools: list[Tool]) -> list[Tool]:
        if self.trusted(server):
            return tools
        hinted = [f"{t.name} ({_hints(t)})" for t in tools if t.annotations is not None]
        if hinted:
            self.trace.record(
                "host",
                "host",
                Kind.HOST_HINTS,
                _("ignores {server}'s annotations (untrusted hints): ").format(server=server) + clauses(hinted),
                server=server,
                outcome=Outcome.IGNORED,
                by=self.name,
            )
        return [tool.model_copy(update={"annotations": None}) for tool in tools]


class PathGuard(Guard):
    """Refuses path arguments that leave the workspace: `~`, absolute paths elsewhere, `..`, links out (notebook 07).

    Both sides are resolved (`realpath`) before they are compared, so a link inside the workspace
    that points outside it leads outside.
    """

    def __init__(self, root: str | Path, names: Iterable[str] = PATH_ARGUMENTS) -> None:
        self.root = Path(os.path.realpath(root))
        self.names = tuple(names)

    def outside(self, value: str) -> bool:
        if value.startswith("~"):
            return True
        target = Path(value) if Path(value).is_absolute() else self.root / value
        return not Path(os.path.realpath(target)).is_relative_to(self.root)

    async def on_call(self, server: str, tool: Tool, name: str, arguments: dict[str, Any]) -> str | None:
        for key in self.names:
            value = arguments.get(key)
            if isinstance(value, str) and self.outside(value):
                return _("{key} {value!r} leads outside the workspace the host granted").format(key=key, value=value)
        return None


class EgressGuard(Guard):
    """Refuses arguments that carry a private key or one of the host's secret values (notebook 07).

    It runs before any person is asked, and `withheld` keeps those values out of the trace: out of the call
    events (`redact`) and, once the shield registers it, out of the model's responses.
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        self.secrets = [s for s in secrets if len(s) >= _MIN_SECRET]

    async def on_call(self, server: str, tool: Tool, name: str, arguments: dict[str, Any]) -> str | None:
        return self.carried(arguments)

    def on_answer(self, server: str, answer: dict[str, Any]) -> str | None:
        """What a person types into a server's form leaves the host too: the same rule as for arguments."""
        return self.carried(answer)

    def carried(self, value: Any) -> str | None:
        """Why `value` (JSON-like) must not leave the host: a private key or a host secret in it; None if neither."""
        text = json.dumps(value, ensure_ascii=False)
        if _PRIVATE_KEY.search(text):
            return _("the arguments carry a private key")
        if any(secret in text for secret in self.secrets):
            return _("the arguments carry one of the host's secret values")
        return None

    def redact(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.withheld(arguments)

    def withheld(self, value: Any) -> Any:
        """`value` (JSON-like) with every private key and host secret replaced: the one rule for the call events
        and, through `Trace.redactors`, for what the model wrote."""
        return json.loads(self._redact_text(json.dumps(value, ensure_ascii=False)))

    def _redact_text(self, text: str) -> str:
        text = _KEY_BLOCK.sub(_REDACTED, text)
        for secret in self.secrets:
            text = text.replace(json.dumps(secret)[1:-1], _REDACTED)
        return text
