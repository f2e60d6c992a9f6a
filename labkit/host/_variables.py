"""`${...}` in editors' MCP configs: each client's documented forms expanded, any other form refused by name."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .._i18n import _
from ..errors import ConfigError

__all__ = ["ConfigError", "Variables", "input_ids"]

_REFERENCE = re.compile(r"\$\{([^{}]*)\}")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_ENV = re.compile(rf"env:({_NAME})")
_BARE = re.compile(rf"({_NAME})")
_DEFAULTED = re.compile(rf"({_NAME}):-(.*)", re.DOTALL)
_INPUT = re.compile(r"input:([^\s:]+)")


@dataclass(frozen=True)
class Variables:
    """The values `${...}` stands for in one config: the workspace, the environment, and the answers to its inputs.

    - `${env:NAME}` (VS Code, Cursor, Windsurf): the variable, or "" when unset, as those editors do;
    - `${NAME}` and `${NAME:-default}` (Claude Code): the variable; unset without a default is an error,
      and the default also stands in for an empty value;
    - `${workspaceFolder}`, `${workspaceFolderBasename}`, `${userHome}`, `${pathSeparator}`, `${/}`;
    - `${input:id}` (VS Code): the answer to the config's input `id`.
    """

    workspace: Path
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    answers: Mapping[str, str] = field(default_factory=dict)

    def predefined(self) -> dict[str, str]:
        return {
            "workspaceFolder": str(self.workspace),
            "workspaceFolderBasename": self.workspace.name,
            "userHome": str(Path.home()),
            "pathSeparator": os.sep,
            "/": os.sep,
        }

    def expand(self, text: str, where: str) -> str:
        """`text` with every reference replaced; a form no client documents, or a value that is missing, is an error."""
        predefined = self.predefined()
        return _REFERENCE.sub(lambda match: self._value(match.group(1), predefined, where), text)

    def _value(self, body: str, predefined: Mapping[str, str], where: str) -> str:
        if body in predefined:
            return predefined[body]
        if match := _ENV.fullmatch(body):
            return self.environ.get(match.group(1), "")
        if match := _INPUT.fullmatch(body):
            if match.group(1) not in self.answers:
                raise ConfigError(
                    _(
                        "{where}: ${{input:{id}}} has no answer: pass inputs={{'{id}': ...}} or open the "
                        "config with Host.from_config, which asks for it in a form"
                    ).format(where=where, id=match.group(1))
                )
            return self.answers[match.group(1)]
        if match := _DEFAULTED.fullmatch(body):
            return self.environ.get(match.group(1)) or match.group(2)
        if match := _BARE.fullmatch(body):
            if match.group(1) not in self.environ:
                raise ConfigError(
                    _(
                        "{where}: ${{{name}}} is not set in the environment and has no default; set it, "
                        "or write ${{{name}:-default}}"
                    ).format(where=where, name=match.group(1))
                )
            return self.environ[match.group(1)]
        raise ConfigError(
            _(
                "{where}: ${{{body}}} is not a variable the lab's host expands: it knows ${{env:NAME}}, "
                "${{NAME}}, ${{NAME:-default}}, ${{input:id}}, ${{workspaceFolder}}, "
                "${{workspaceFolderBasename}}, ${{userHome}}, ${{pathSeparator}} and ${{/}}"
            ).format(where=where, body=body)
        )


def input_ids(text: str) -> list[str]:
    """The `${input:id}` ids `text` refers to, in order."""
    return [match.group(1) for body in _REFERENCE.findall(text) if (match := _INPUT.fullmatch(body))]
