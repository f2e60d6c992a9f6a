"""Extension points of the host's pipeline: guards that see every list, call and result, and host-side tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp_types import Tool

__all__ = ["Guard", "LocalTool", "LocalToolResult"]


class Guard:
    """A step in the host's pipeline; override what you need, the rest passes through (notebook 07).

    `on_list` may drop or mark tools before the model is offered them; `on_call` may return a
    reason to block a call (before any person is asked); `review` may return a reason a person must
    approve it even if the tool only reads; `redact` hides what must not be stored in the trace;
    `on_result` may rewrite what the model will read; `on_instructions` may rewrite or withhold (return "")
    a server's `instructions` before the host puts them in the model's context; `on_form` may decline a
    server's form before the person sees it, and `on_answer` keep the person's answer from being sent;
    `on_content` may withhold a prompt or resource the user loads; `on_deliver` may rewrite the answer the host
    delivers.
    """

    @property
    def name(self) -> str:
        """How decisions name this guard (`by=` in the trace)."""
        return type(self).__name__

    async def on_list(self, server: str, tools: list[Tool]) -> list[Tool]:
        return tools

    async def on_call(self, server: str, tool: Tool, name: str, arguments: dict[str, Any]) -> str | None:
        return None

    async def review(self, server: str, tool: Tool, name: str, arguments: dict[str, Any]) -> str | None:
        return None

    def redact(self, arguments: dict[str, Any]) -> dict[str, Any]:
        return arguments

    def on_result(self, server: str, name: str, text: str, is_error: bool) -> str:
        return text

    def on_instructions(self, server: str, text: str) -> str:
        return text

    def on_form(self, server: str, message: str, schema: dict[str, Any]) -> str | None:
        return None

    def on_answer(self, server: str, answer: dict[str, Any]) -> str | None:
        return None

    async def on_content(self, server: str, kind: str, name: str, text: str, arguments: dict[str, str]) -> str | None:
        """`kind` is "prompt" or "resource"; a reason returned withholds the content from the conversation."""
        return None

    def on_deliver(self, answer: str) -> str:
        return answer


@dataclass(frozen=True)
class LocalToolResult:
    """What a host-side tool returns to the model."""

    text: str
    is_error: bool = False


@dataclass(frozen=True)
class LocalTool:
    """A tool the host itself answers, without a server (notebook 06: loading a skill is one)."""

    tool: Tool
    handler: Callable[[dict[str, Any]], Awaitable[LocalToolResult]]
