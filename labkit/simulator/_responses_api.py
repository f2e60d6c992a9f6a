"""The OpenAI Responses API (`POST /v1/responses`) as the simulator speaks it, with `previous_response_id`."""

from __future__ import annotations

from typing import Any

from ._chat_api import dumps_arguments, loads_arguments, text_of_parts
from ._dialogue import Choice, Decision, Dialogue, Message, ToolOutcome, ToolSeen, ToolSpec
from ._errors import Rejected, check_tool_name, openai_error
from ._stamps import CREATED, MODEL_NAME, make_id, token_count
from ._thinking import reasoning_requested, thinking_text

__all__ = ["ResponsesAPI"]


def _items(value: Any) -> list[dict[str, Any]]:
    return [{"role": "user", "content": value}] if isinstance(value, str) else list(value or [])


def _choice(value: Any) -> Choice:
    if isinstance(value, dict):
        return Choice("tool", value.get("name"))
    return Choice("any" if value == "required" else "none" if value == "none" else "auto")


def _piece(item: dict[str, Any], called: set[str]) -> Message | None:
    """One input item as a neutral message fragment (None for items the model ignores)."""
    kind = item.get("type", "message")
    if kind == "function_call":
        called.add(item["call_id"])
        return Message(
            "assistant", calls=(ToolSeen(item["call_id"], item["name"], loads_arguments(item.get("arguments"))),)
        )
    if kind == "function_call_output":
        if item.get("call_id") not in called:
            raise Rejected(
                f"No tool call found for function call output with call_id {item.get('call_id')}.", param="input"
            )
        return Message("user", results=(ToolOutcome(item["call_id"], text_of_parts(item.get("output")), False),))
    if kind == "message" and item.get("role") in {"user", "assistant"}:
        return Message(item["role"], text_of_parts(item.get("content")))
    return None


def _merge(pieces: list[Message]) -> list[Message]:
    merged: list[Message] = []
    for piece in pieces:
        if merged and merged[-1].role == piece.role:
            last = merged[-1]
            text = "\n".join(t for t in (last.text, piece.text) if t)
            merged[-1] = Message(piece.role, text, last.calls + piece.calls, last.results + piece.results)
        else:
            merged.append(piece)
    return merged


def _dialogue_of(items: list[dict[str, Any]]) -> tuple[list[Message], str]:
    called: set[str] = set()
    system = [text_of_parts(i.get("content")) for i in items if i.get("role") in {"system", "developer"}]
    pieces = [p for p in (_piece(i, called) for i in items if i.get("role") not in {"system", "developer"}) if p]
    answered = {r.call_id for p in pieces for r in p.results}
    unanswered = [c for c in called if c not in answered]
    if unanswered:
        raise Rejected(f"No tool output found for function call {sorted(unanswered)[0]}.", param="input")
    return _merge(pieces), "\n".join(system)


class ResponsesAPI:
    """Adapter for `/v1/responses`; keeps past responses in memory for `previous_response_id` (notebook 01)."""

    path = "/v1/responses"

    def __init__(self) -> None:
        self._stored: dict[str, list[dict[str, Any]]] = {}
        self._reasoning_of: dict[str, str] = {}  # function_call item id -> the reasoning item id it needs

    def _check_reasoning(self, items: list[dict[str, Any]]) -> None:
        """A function_call this model made while reasoning must come back after its reasoning item."""
        for position, item in enumerate(items):
            needed = self._reasoning_of.get(str(item.get("id")))
            if item.get("type") != "function_call" or needed is None:
                continue
            before = {i.get("id") for i in items[:position] if i.get("type") == "reasoning"}
            if needed not in before:
                raise Rejected(
                    f"Item '{item['id']}' of type 'function_call' was provided without its required "
                    f"'reasoning' item: '{needed}'.",
                    param="input",
                )

    def _history(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        previous = body.get("previous_response_id")
        if previous and previous not in self._stored:
            raise Rejected(
                f"Previous response with id '{previous}' not found.",
                param="previous_response_id",
                code="previous_response_not_found",
            )
        return (self._stored[previous] if previous else []) + _items(body.get("input"))

    def parse(self, body: dict[str, Any], scenario: str | None) -> Dialogue:
        tools = [
            ToolSpec(
                check_tool_name(t.get("name"), f"tools[{i}].name"),
                t.get("description") or "",
                t.get("parameters") or {},
                t.get("output_schema") or {},
            )
            for i, t in enumerate(body.get("tools") or [])
        ]
        history = self._history(body)
        self._check_reasoning(history)
        messages, system = _dialogue_of(history)
        instructions = body.get("instructions") or ""
        return Dialogue(
            messages,
            tools,
            _choice(body.get("tool_choice")),
            body.get("parallel_tool_calls", True) is not False,
            "\n".join(t for t in (instructions, system) if t),
            scenario,
        )

    def render(self, decision: Decision, body: dict[str, Any], seed: str) -> dict[str, Any]:
        output: list[dict[str, Any]] = []
        reasoning_id = make_id("rs_sim_", seed) if reasoning_requested(body) else None
        if reasoning_id:
            summary = {"type": "summary_text", "text": thinking_text(decision)}
            output.append({"type": "reasoning", "id": reasoning_id, "summary": [summary]})
        if decision.text:
            output.append(
                {
                    "type": "message",
                    "id": make_id("msg_sim_", seed),
                    "status": "completed",
                    "role": "assistant",
                    "content": [
                        {"type": "refusal", "refusal": decision.text}
                        if decision.declined
                        else {"type": "output_text", "text": decision.text, "annotations": [], "logprobs": []}
                    ],
                }
            )
        output += [
            {
                "type": "function_call",
                "id": make_id("fc_sim_", seed, n),
                "call_id": make_id("call_sim_", seed, n),
                "name": call.name,
                "arguments": dumps_arguments(call.arguments),
                "status": "completed",
            }
            for n, call in enumerate(decision.calls)
        ]
        if reasoning_id:
            self._reasoning_of |= {item["id"]: reasoning_id for item in output if item["type"] == "function_call"}
        response_id = make_id("resp_sim_", seed)
        self._stored[response_id] = self._history(body) + output
        input_tokens, output_tokens = token_count(body), token_count(output)
        return {
            "id": response_id,
            "object": "response",
            "created_at": CREATED,
            "status": "completed",
            "completed_at": CREATED,
            "error": None,
            "incomplete_details": None,
            "instructions": body.get("instructions"),
            "metadata": {},
            "model": MODEL_NAME,
            "output": output,
            "parallel_tool_calls": body.get("parallel_tool_calls", True),
            "previous_response_id": body.get("previous_response_id"),
            "temperature": 1.0,
            "top_p": 1.0,
            "store": True,
            "tool_choice": body.get("tool_choice", "auto"),
            "reasoning": body.get("reasoning"),
            "tools": body.get("tools", []),
            "usage": {
                "input_tokens": input_tokens,
                "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                "output_tokens": output_tokens,
                "output_tokens_details": {"reasoning_tokens": token_count(output[0]) if reasoning_id else 0},
                "total_tokens": input_tokens + output_tokens,
            },
        }

    def error(self, rejected: Rejected, seed: str) -> dict[str, Any]:
        return openai_error(rejected)
