"""Thinking and reasoning in the tool loop: the simulated model emits them, marked simulated; the host sends them
back as each API requires, and each API's 400 names what was dropped or changed (through the real SDK clients)."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import pytest

from labkit.host import THINKING_BUDGET, Conversation, ToolResult
from labkit.lessons import make_client
from labkit.simulator import MODEL_NAME

pytestmark = pytest.mark.anyio
GET_PLAN = {
    "name": "get_plan",
    "description": "Look up a subscription plan: how many accounts it allows. Use it when the user asks how many "
    "accounts a plan allows.",
    "inputSchema": {
        "type": "object",
        "properties": {"plan": {"type": "string", "enum": ["family", "personal"]}},
        "required": ["plan"],
    },
}
QUESTION = "How many accounts does the family plan allow?"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _first_turn(api: str, **options: Any) -> tuple[Conversation, list[str]]:
    client = make_client("anthropic" if api == "anthropic" else "openai", env={})
    conversation = Conversation(client, MODEL_NAME, [GET_PLAN], api=api, **options)  # type: ignore[arg-type]
    conversation.add_user(QUESTION)
    turn = await conversation.ask()
    assert turn.tool_calls, "the model should have proposed get_plan"
    return conversation, [call.id for call in turn.tool_calls]


def _answer(conversation: Conversation, calls: list[str]) -> None:
    conversation.add_tool_results([ToolResult(call_id, '{"max_accounts": 6}') for call_id in calls])


async def test_anthropic_thinking_is_signed_labelled_and_sent_back_unchanged() -> None:
    conversation, calls = await _first_turn("anthropic", thinking=True)
    blocks = conversation.history[-1]["content"]
    assert [b.type for b in blocks][:2] == ["thinking", "tool_use"]
    assert blocks[0].thinking.startswith("[simulated]") and blocks[0].signature
    _answer(conversation, calls)
    final = await conversation.ask()
    assert not final.tool_calls and final.text
    assert final.raw.content[0].type == "thinking"  # each reply thinks first


async def test_anthropic_refuses_a_dropped_thinking_block_like_an_unanswered_call() -> None:
    conversation, calls = await _first_turn("anthropic", thinking=True)
    conversation.history[-1]["content"] = [b for b in conversation.history[-1]["content"] if b.type != "thinking"]
    _answer(conversation, calls)
    with pytest.raises(anthropic.BadRequestError) as refused:
        await conversation.ask()
    body: Any = refused.value.body
    message = body["error"]["message"]
    assert refused.value.status_code == 400 and message.startswith("[simulated] messages.1.content.0.type")
    assert "Expected `thinking` or `redacted_thinking`, but found `tool_use`" in message


async def test_anthropic_refuses_an_edited_thinking_block() -> None:
    conversation, calls = await _first_turn("anthropic", thinking=True)
    thought = conversation.history[-1]["content"][0]
    conversation.history[-1]["content"][0] = {
        "type": "thinking",
        "thinking": thought.thinking + " (edited)",
        "signature": thought.signature,
    }
    _answer(conversation, calls)
    with pytest.raises(anthropic.BadRequestError, match="Invalid `signature` in `thinking` block"):
        await conversation.ask()


@pytest.mark.parametrize("tool_choice", ["required", "get_plan"])
async def test_anthropic_thinking_cannot_be_combined_with_a_forced_tool(tool_choice: str) -> None:
    conversation = Conversation(
        make_client("anthropic", env={}), MODEL_NAME, [GET_PLAN], None, tool_choice, thinking=True
    )
    conversation.add_user(QUESTION)
    with pytest.raises(anthropic.BadRequestError, match="Thinking may not be enabled when tool_choice forces"):
        await conversation.ask()


async def test_anthropic_budget_rules() -> None:
    client = make_client("anthropic", sync=False, env={})
    with pytest.raises(anthropic.BadRequestError, match="greater than or equal to 1024"):
        await client.messages.create(
            model=MODEL_NAME,
            max_tokens=4096,
            messages=[{"role": "user", "content": "hi"}],
            thinking={"type": "enabled", "budget_tokens": 512},
        )
    with pytest.raises(anthropic.BadRequestError, match=r"must be greater than `thinking\.budget_tokens`"):
        await client.messages.create(
            model=MODEL_NAME,
            max_tokens=THINKING_BUDGET,
            messages=[{"role": "user", "content": "hi"}],
            thinking={"type": "enabled", "budget_tokens": THINKING_BUDGET},
        )


async def test_responses_reasoning_item_goes_back_before_its_call() -> None:
    conversation, calls = await _first_turn("responses", thinking=True)
    kinds = [i["type"] for i in conversation.history if "type" in i]
    assert kinds[:2] == ["reasoning", "function_call"]
    _answer(conversation, calls)
    assert not (await conversation.ask()).tool_calls


async def test_responses_refuses_a_call_without_its_reasoning_item() -> None:
    conversation, calls = await _first_turn("responses", thinking=True)
    reasoning = next(i for i in conversation.history if i.get("type") == "reasoning")
    call = next(i for i in conversation.history if i.get("type") == "function_call")
    conversation.history = [i for i in conversation.history if i.get("type") != "reasoning"]
    _answer(conversation, calls)
    with pytest.raises(openai.BadRequestError) as refused:
        await conversation.ask()
    body: Any = refused.value.body
    assert body["message"] == (
        f"[simulated] Item '{call['id']}' of type 'function_call' was provided "
        f"without its required 'reasoning' item: '{reasoning['id']}'."
    )


async def test_responses_stateful_turns_need_not_resend_reasoning() -> None:
    conversation, calls = await _first_turn("responses", thinking=True, stateful=True)
    _answer(conversation, calls)
    assert not (await conversation.ask()).tool_calls


async def test_without_thinking_nothing_changes() -> None:
    plain, _calls = await _first_turn("anthropic")
    assert [b.type for b in plain.history[-1]["content"]] == ["tool_use"]
    chat, _calls = await _first_turn("chat", thinking=True)  # Chat keeps reasoning to itself: nothing to send back
    assistant = [m for m in chat.history if m.get("role") == "assistant"]
    assert assistant and "reasoning" not in assistant[-1]
