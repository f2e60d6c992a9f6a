"""How each model API shapes the host's side of a tool loop: request fields, replies, tool results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._mapping import to_mcp_call
from ._provider_names import NameMap

__all__ = ["DIALECTS", "Dialect", "ToolCall", "ToolResult"]


@dataclass(frozen=True)
class ToolCall:
    """A call the model proposed; `name` is the MCP name; `error` says why the arguments are unusable (notebook 04)."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    error: str | None = None


@dataclass(frozen=True)
class ToolResult:
    """What the host writes back for one call (notebook 01)."""

    call_id: str
    text: str
    is_error: bool = False


def _error_text(result: ToolResult) -> str:
    """Chat and Responses have no error flag, so an error has to say so in its text."""
    return result.text if not result.is_error or result.text.startswith("Error") else f"Error: {result.text}"


def _call(call_id: str, name: str, arguments: Any, names: NameMap, strict: bool) -> ToolCall:
    mcp = to_mcp_call(name, arguments, names, nulls_mean_absent=strict)
    return ToolCall(call_id, mcp.name, mcp.arguments, mcp.error)


class Dialect:
    """The shapes of one API; subclasses fill in the differences (notebook 01)."""

    def choice(self, tool_choice: str, names: NameMap, parallel: bool) -> dict[str, Any]:
        raise NotImplementedError

    def read(self, response: Any, names: NameMap, strict: bool) -> tuple[str, list[ToolCall], str, list[Any]]:
        """(text, tool calls, stop reason, the assistant turn as items to append to the history)."""
        raise NotImplementedError

    def results(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        raise NotImplementedError


class _Anthropic(Dialect):
    def choice(self, tool_choice: str, names: NameMap, parallel: bool) -> dict[str, Any]:
        kind = {"auto": "auto", "any": "any", "required": "any", "none": "none"}.get(tool_choice, "tool")
        choice: dict[str, Any] = {"type": kind} | ({"name": names.provider(tool_choice)} if kind == "tool" else {})
        if not parallel and kind != "none":
            choice["disable_parallel_tool_use"] = True
        return {"tool_choice": choice}

    def read(self, response: Any, names: NameMap, strict: bool) -> tuple[str, list[ToolCall], str, list[Any]]:
        text = "".join(b.text for b in response.content if b.type == "text")
        calls = [_call(b.id, b.name, b.input, names, strict) for b in response.content if b.type == "tool_use"]
        return text, calls, response.stop_reason, [{"role": "assistant", "content": response.content}]

    def results(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        blocks = [
            {"type": "tool_result", "tool_use_id": r.call_id, "content": r.text, "is_error": r.is_error}
            for r in results
        ]
        return [{"role": "user", "content": blocks}]


def _openai_choice(tool_choice: str, named: dict[str, Any], parallel: bool) -> dict[str, Any]:
    choice: Any = {"auto": "auto", "any": "required", "required": "required", "none": "none"}.get(tool_choice, named)
    return {"tool_choice": choice} | ({} if parallel else {"parallel_tool_calls": False})


class _Chat(Dialect):
    def choice(self, tool_choice: str, names: NameMap, parallel: bool) -> dict[str, Any]:
        return _openai_choice(
            tool_choice, {"type": "function", "function": {"name": names.provider(tool_choice)}}, parallel
        )

    def read(self, response: Any, names: NameMap, strict: bool) -> tuple[str, list[ToolCall], str, list[Any]]:
        choice = response.choices[0]
        message = choice.message
        calls = [_call(c.id, c.function.name, c.function.arguments, names, strict) for c in message.tool_calls or []]
        return message.content or "", calls, choice.finish_reason, [message.model_dump(exclude_none=True)]

    def results(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [{"role": "tool", "tool_call_id": r.call_id, "content": _error_text(r)} for r in results]


class _Responses(Dialect):
    def choice(self, tool_choice: str, names: NameMap, parallel: bool) -> dict[str, Any]:
        return _openai_choice(tool_choice, {"type": "function", "name": names.provider(tool_choice)}, parallel)

    def read(self, response: Any, names: NameMap, strict: bool) -> tuple[str, list[ToolCall], str, list[Any]]:
        calls = [
            _call(i.call_id, i.name, i.arguments, names, strict) for i in response.output if i.type == "function_call"
        ]
        stop = "function_call" if calls else response.status
        return response.output_text, calls, stop, [i.model_dump(exclude_none=True) for i in response.output]

    def results(self, results: list[ToolResult]) -> list[dict[str, Any]]:
        return [{"type": "function_call_output", "call_id": r.call_id, "output": _error_text(r)} for r in results]


DIALECTS: dict[str, Dialect] = {"anthropic": _Anthropic(), "chat": _Chat(), "responses": _Responses()}
