"""The OpenAI Chat Completions API (`POST /v1/chat/completions`) as the simulator speaks it."""

from __future__ import annotations

import json
from typing import Any

from ._dialogue import Choice, Decision, Dialogue, Message, ToolOutcome, ToolSeen, ToolSpec
from ._errors import Rejected, check_tool_name, openai_error
from ._stamps import CREATED, MODEL_NAME, make_id, token_count

__all__ = ["ChatCompletions", "dumps_arguments", "loads_arguments", "text_of_parts"]


def text_of_parts(content: Any) -> str:
    """The text of a string or of a list of text parts (`text`, `input_text`, `output_text`) (notebook 01)."""
    if isinstance(content, str):
        return content
    return "\n".join(p.get("text", "") for p in content or [] if isinstance(p, dict) and "text" in p)


def loads_arguments(arguments: Any) -> dict[str, Any]:
    """Arguments as the model sent them (a JSON string); malformed ones read as empty (notebook 01)."""
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def dumps_arguments(arguments: dict[str, Any]) -> str:
    """Arguments the way OpenAI models send them: a compact JSON string (notebook 01)."""
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def _choice(value: Any) -> Choice:
    if isinstance(value, dict):
        if value.get("type") == "allowed_tools":
            return Choice("any" if value["allowed_tools"].get("mode") == "required" else "auto")
        return Choice("tool", (value.get("function") or {}).get("name") or value.get("name"))
    return Choice("any" if value == "required" else "none" if value == "none" else "auto")


def _unanswered(index: int, ids: list[str]) -> Rejected:
    return Rejected(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. "
        f"The following tool_call_ids did not have response messages: {', '.join(ids)}",
        param=f"messages.[{index}].role",
    )


def _messages(body: dict[str, Any]) -> tuple[list[Message], str]:
    messages: list[Message] = []
    system: list[str] = []
    expected: list[str] = []
    results: list[ToolOutcome] = []
    asked_at = 0
    for index, message in enumerate(body.get("messages") or []):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in expected:
                raise Rejected(  # "preceeding" (sic) is how the real API spells it
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                    "with 'tool_calls'.",
                    param=f"messages.[{index}].role",
                )
            expected.remove(call_id)
            results.append(ToolOutcome(call_id, text_of_parts(message.get("content"))))
            continue
        if expected:
            raise _unanswered(asked_at, expected)
        if results:
            messages.append(Message("user", results=tuple(results)))
            results = []
        text = text_of_parts(message.get("content"))
        if role in {"system", "developer"}:
            system.append(text)
        elif role == "assistant":
            calls = tuple(
                ToolSeen(c["id"], c["function"]["name"], loads_arguments(c["function"].get("arguments")))
                for c in message.get("tool_calls") or []
            )
            messages.append(Message("assistant", text, calls))
            expected, asked_at = [c.id for c in calls], index
        else:
            messages.append(Message("user", text))
    if expected:
        raise _unanswered(asked_at, expected)
    if results:
        messages.append(Message("user", results=tuple(results)))
    return messages, "\n".join(system)


class ChatCompletions:
    """Adapter for `/v1/chat/completions` (notebook 01)."""

    path = "/v1/chat/completions"

    def parse(self, body: dict[str, Any], scenario: str | None) -> Dialogue:
        tools = []
        for index, tool in enumerate(body.get("tools") or []):
            function = tool.get("function") or {}
            name = check_tool_name(function.get("name"), f"tools[{index}].function.name")
            tools.append(ToolSpec(name, function.get("description") or "", function.get("parameters") or {}))
        messages, system = _messages(body)
        return Dialogue(
            messages,
            tools,
            _choice(body.get("tool_choice")),
            body.get("parallel_tool_calls", True) is not False,
            system,
            scenario,
        )

    def render(self, decision: Decision, body: dict[str, Any], seed: str) -> dict[str, Any]:
        calls = [
            {
                "id": make_id("call_sim_", seed, n),
                "type": "function",
                "function": {"name": call.name, "arguments": dumps_arguments(call.arguments)},
            }
            for n, call in enumerate(decision.calls)
        ]
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if decision.declined else decision.text or None,
            "refusal": decision.text if decision.declined else None,
            "annotations": [],
        }
        if calls:
            message["tool_calls"] = calls
        completion_tokens = token_count(message)
        return {
            "id": make_id("chatcmpl-sim", seed),
            "object": "chat.completion",
            "created": CREATED,
            "model": MODEL_NAME,
            "choices": [
                {"index": 0, "message": message, "logprobs": None, "finish_reason": "tool_calls" if calls else "stop"}
            ],
            "usage": {
                "prompt_tokens": token_count(body),
                "completion_tokens": completion_tokens,
                "total_tokens": token_count(body) + completion_tokens,
            },
            "system_fingerprint": "fp_simulated_teaching_model",
            "service_tier": "default",
        }

    def error(self, rejected: Rejected, seed: str) -> dict[str, Any]:
        return openai_error(rejected)
