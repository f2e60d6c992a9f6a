"""One host-side conversation that drives Anthropic Messages, OpenAI Chat or OpenAI Responses alike."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ._dialects import DIALECTS, ToolCall, ToolResult
from ._mapping import Api, convert_tools

__all__ = ["THINKING_BUDGET", "Conversation", "ToolCall", "ToolResult", "Turn"]

THINKING_BUDGET = 1024
"""Tokens an Anthropic model may think with when a conversation asks for thinking (the API's minimum)."""
# What each API is sent when `thinking=True`: Anthropic extended thinking, a reasoning effort for OpenAI.
_THINKING: dict[str, dict[str, Any]] = {
    "anthropic": {"thinking": {"type": "enabled", "budget_tokens": THINKING_BUDGET}},
    "chat": {"reasoning_effort": "low"},
    "responses": {"reasoning": {"effort": "low", "summary": "auto"}},
}


@dataclass(frozen=True)
class Turn:
    """The model's reply: text, proposed tool calls (MCP names), why it stopped, and the SDK object (notebook 01).

    `declined` is read from the API's refusal field (Anthropic `stop_reason: "refusal"`, Chat
    `message.refusal`, a Responses `refusal` part): the model says it cannot do the task, so its
    text is an explanation, not an answer to deliver (notebook 03).
    """

    text: str
    tool_calls: list[ToolCall]
    stop_reason: str | None
    response_id: str
    raw: Any = field(repr=False, default=None)
    declined: bool = False


def _refusal(response: Any, api: Api) -> str | None:
    """The refusal a reply carries, in its API's own field; None when the model did not decline."""
    if api == "anthropic":
        if response.stop_reason != "refusal":
            return None
        return "".join(b.text for b in response.content if b.type == "text")
    if api == "chat":
        return response.choices[0].message.refusal
    parts = [p.refusal for i in response.output if i.type == "message" for p in i.content if p.type == "refusal"]
    return "".join(parts) if parts else None


class Conversation:
    """The history, the tools and the tool-result shapes for one API; `await ask()` sends one turn (notebook 01).

    `tool_choice` is "auto", "required" (or "any"), "none", or an MCP tool name to force. With
    `strict=True` OpenAI tools use strict schemas and nulls in the arguments are dropped; Anthropic
    tools carry `strict: true` with closed objects, optional properties left optional. With
    `stateful=True` (Responses only) each turn sends just the new items and `previous_response_id`.
    Anthropic only (notebook 08): `cache_tools=True` marks the tool list as a prompt-cache prefix;
    `defer_tools` names MCP tools sent with `defer_loading`, kept out of the model's context until
    the provider's tool search finds them (its regex search tool is added to the list).
    `thinking=True` asks for the model's reasoning (notebook 01): Anthropic `thinking` blocks and Responses
    `reasoning` items come back in the assistant turn, and the history sends them back unchanged, as both
    APIs require; Anthropic's `max_tokens` then covers the thinking budget too. Chat Completions keeps a
    reasoning model's reasoning to itself: there is nothing to send back.
    """

    def __init__(
        self,
        client: Any,
        model: str,
        tools: list[Any],
        system: str | None = None,
        tool_choice: str = "auto",
        *,
        api: Api | None = None,
        strict: bool = False,
        parallel: bool = True,
        stateful: bool = False,
        max_tokens: int = 1024,
        cache_tools: bool = False,
        defer_tools: Iterable[str] = (),
        thinking: bool = False,
    ) -> None:
        self.client = client
        self.model = model
        self.api: Api = api or ("anthropic" if type(client).__module__.startswith("anthropic") else "chat")
        self.system = system
        self.strict = strict
        self.stateful = stateful and self.api == "responses"
        self.max_tokens = max_tokens + (THINKING_BUDGET if thinking and self.api == "anthropic" else 0)
        self.thinking = thinking
        self.converted, self.names = convert_tools(tools, self.api, strict=strict)
        self.cache_tools = cache_tools
        self.defer_tools = frozenset(defer_tools)
        if (cache_tools or self.defer_tools) and self.api != "anthropic":
            raise ValueError(
                f"cache_tools and defer_tools are Anthropic Messages options; this conversation uses {self.api!r}"
            )
        unknown = self.defer_tools - {tool.mcp_name for tool in self.converted}
        if unknown:
            raise ValueError(f"defer_tools names tools that are not offered: {sorted(unknown)}")
        self.history: list[Any] = [{"role": "system", "content": system}] if system and self.api == "chat" else []
        self._dialect = DIALECTS[self.api]
        self._choice = self._dialect.choice(tool_choice, self.names, parallel) if tools else {}
        self._previous_id: str | None = None
        self._unsent: list[Any] = []

    @property
    def report(self) -> list[dict[str, str]]:
        """What each tool conversion kept, changed or dropped (for a pandas table)."""
        return [row for tool in self.converted for row in tool.report]

    def add_user(self, text: str) -> None:
        self._append([{"role": "user", "content": text}])

    def add_tool_results(self, results: list[ToolResult]) -> None:
        """Write results back in the API's required shape (one user message / one tool message each / items)."""
        self._append(self._dialect.results(results))

    async def ask(self) -> Turn:
        response = await self._send()
        text, calls, stop_reason, assistant = self._dialect.read(response, self.names, self.strict)
        self.history.extend(assistant)
        self._unsent = []
        self._previous_id = response.id if self.stateful else None
        refusal = _refusal(response, self.api)
        return Turn(text or refusal or "", calls, stop_reason, response.id, response, declined=refusal is not None)

    def _append(self, items: list[Any]) -> None:
        self.history.extend(items)
        self._unsent.extend(items)

    def _tool_definitions(self) -> list[dict[str, Any]]:
        tools = [
            t.definition | ({"defer_loading": True} if t.mcp_name in self.defer_tools else {}) for t in self.converted
        ]
        if self.defer_tools:
            tools.append({"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"})
        if self.cache_tools and tools:
            # One breakpoint after the last tool: the whole list is the cached prefix of every request.
            tools[-1] = tools[-1] | {"cache_control": {"type": "ephemeral"}}
        return tools

    async def _send(self) -> Any:
        tools = self._tool_definitions()
        options: dict[str, Any] = {"model": self.model, **self._choice} | ({"tools": tools} if tools else {})
        options |= _THINKING[self.api] if self.thinking else {}
        if self.api == "anthropic":
            system = {"system": self.system} if self.system else {}
            return await self.client.messages.create(
                max_tokens=self.max_tokens, messages=self.history, **system, **options
            )
        if self.api == "chat":
            return await self.client.chat.completions.create(messages=self.history, **options)
        instructions = {"instructions": self.system} if self.system else {}
        state = (
            {"previous_response_id": self._previous_id, "input": self._unsent}
            if self._previous_id
            else {"input": self.history}
        )
        return await self.client.responses.create(**state, **instructions, **options)
