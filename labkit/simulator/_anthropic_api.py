"""The Anthropic Messages API (`POST /v1/messages`) as the simulator speaks it: parse, check, render."""

from __future__ import annotations

from typing import Any

from ._dialogue import Choice, Decision, Dialogue, Message, ToolOutcome, ToolSeen, ToolSpec
from ._errors import TOOL_NAME, Rejected
from ._stamps import MODEL_NAME, make_id, token_count
from ._thinking import sign, signed, thinking_requested, thinking_text

__all__ = ["AnthropicMessages"]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


def _tools(body: dict[str, Any]) -> list[ToolSpec]:
    tools = []
    for index, tool in enumerate(body.get("tools") or []):
        # The provider keeps deferred tools out of the model's context, and runs its own typed tools itself.
        if tool.get("defer_loading") or "type" in tool:
            continue
        if not TOOL_NAME.match(str(tool.get("name", ""))):
            raise Rejected(f"tools.{index}.custom.name: String should match pattern '{TOOL_NAME.pattern}'")
        tools.append(ToolSpec(tool["name"], tool.get("description") or "", tool.get("input_schema") or {}))
    return tools


def _user(index: int, content: Any, expected: list[str]) -> Message:
    if isinstance(content, str):
        if expected:
            raise _unanswered(index - 1, expected)
        return Message("user", content)
    results, seen_other = [], False
    for position, block in enumerate(content):
        if block.get("type") != "tool_result":
            seen_other = True
            continue
        if seen_other:
            raise Rejected(
                f"messages.{index}.content.{position}: tool_result blocks must come first in the user message "
                "content, before any other block"
            )
        if block.get("tool_use_id") not in expected:
            raise Rejected(
                f"messages.{index}.content.{position}: unexpected `tool_use_id` found in `tool_result` blocks: "
                f"{block.get('tool_use_id')}. "
                "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
            )
        results.append(
            ToolOutcome(block["tool_use_id"], _text_of(block.get("content", "")), bool(block.get("is_error")))
        )
    unanswered = [i for i in expected if i not in {r.call_id for r in results}]
    if unanswered:
        raise _unanswered(index - 1, unanswered)
    return Message("user", _text_of(content), results=tuple(results))


def _unanswered(index: int, ids: list[str]) -> Rejected:
    return Rejected(
        f"messages.{index}: `tool_use` ids were found without `tool_result` blocks immediately after: "
        f"{', '.join(ids)}. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )


def _check_thinking(body: dict[str, Any]) -> None:
    """The rules the real API enforces once thinking is on, worded like its 400s."""
    thinking = body["thinking"]
    choice = (body.get("tool_choice") or {}).get("type")
    if choice in {"any", "tool"}:
        raise Rejected("Thinking may not be enabled when tool_choice forces tool use.")
    if thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or budget < 1024:
            raise Rejected("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if budget >= int(body.get("max_tokens") or 0):
            raise Rejected(
                "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our "
                "documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
            )
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    ends_with_results = last.get("role") == "user" and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in last.get("content") or [] if b
    )
    if ends_with_results and len(messages) >= 2 and isinstance(messages[-2].get("content"), list):
        index, content = len(messages) - 2, messages[-2]["content"]
        found = content[0].get("type") if content else "nothing"
        if found not in {"thinking", "redacted_thinking"}:
            raise Rejected(
                f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found `{found}`. "
                "When `thinking` is enabled, a final `assistant` message must start with a thinking block "
                "(preceeding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include "
                "thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult "
                "our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
            )


def _messages(body: dict[str, Any]) -> list[Message]:
    messages: list[Message] = []
    expected: list[str] = []
    for index, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        if message.get("role") == "user":
            messages.append(_user(index, content, expected))
            expected = []
            continue
        if expected:
            raise _unanswered(index - 1, expected)
        blocks = [] if isinstance(content, str) else content or []
        for position, block in enumerate(blocks):
            if block.get("type") == "thinking" and not signed(block):
                raise Rejected(f"messages.{index}.content.{position}: Invalid `signature` in `thinking` block")
        calls = tuple(ToolSeen(b["id"], b["name"], b.get("input") or {}) for b in blocks if b.get("type") == "tool_use")
        messages.append(Message("assistant", _text_of(content), calls))
        expected = [c.id for c in calls]
    if expected:
        raise _unanswered(len(messages) - 1, expected)
    return messages


class AnthropicMessages:
    """Adapter for `/v1/messages` (notebook 01)."""

    path = "/v1/messages"

    def parse(self, body: dict[str, Any], scenario: str | None) -> Dialogue:
        if thinking_requested(body):
            _check_thinking(body)
        choice = body.get("tool_choice") or {}
        mode = choice.get("type", "auto")
        return Dialogue(
            messages=_messages(body),
            tools=_tools(body),
            choice=Choice(mode, choice.get("name")),
            parallel=not choice.get("disable_parallel_tool_use", False),
            system=_text_of(body.get("system", "")),
            scenario=scenario,
        )

    def render(self, decision: Decision, body: dict[str, Any], seed: str) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if thinking_requested(body):
            thought = thinking_text(decision)
            content.append({"type": "thinking", "thinking": thought, "signature": sign(thought)})
        content += [{"type": "text", "text": decision.text}] if decision.text else []
        content += [
            {"type": "tool_use", "id": make_id("toolu_sim_", seed, n), "name": call.name, "input": call.arguments}
            for n, call in enumerate(decision.calls)
        ]
        return {
            "id": make_id("msg_sim_", seed),
            "type": "message",
            "role": "assistant",
            "model": MODEL_NAME,
            "content": content,
            "stop_reason": "tool_use" if decision.calls else "refusal" if decision.declined else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": token_count(body),
                "output_tokens": token_count(content),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def error(self, rejected: Rejected, seed: str) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": rejected.message},
            "request_id": make_id("req_sim_", seed),
        }
