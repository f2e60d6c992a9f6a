"""The 400 errors the simulator answers for classic tool-loop mistakes, worded like the real APIs."""

from __future__ import annotations

import re
from typing import Any

from ..errors import LabError

__all__ = ["TOOL_NAME", "Rejected", "check_tool_name", "openai_error"]

TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class Rejected(LabError):
    """A request the real API would refuse; the adapter renders it in its API's error shape (notebook 05)."""

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message = "[simulated] " + message
        self.param = param
        self.code = code


def check_tool_name(name: object, where: str) -> str:
    """Refuse a tool name providers reject (MCP allows dots; providers do not) (notebook 02)."""
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        raise Rejected(
            f"Invalid '{where}': string does not match pattern. "
            f"Expected a string that matches the pattern '{TOOL_NAME.pattern}', got {name!r}.",
            param=where,
            code="invalid_value",
        )
    return name


def openai_error(rejected: Rejected) -> dict[str, Any]:
    """The error body both OpenAI APIs answer with (notebook 05)."""
    return {
        "error": {
            "message": rejected.message,
            "type": "invalid_request_error",
            "param": rejected.param,
            "code": rejected.code,
        }
    }
