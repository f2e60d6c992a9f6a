"""The classic tool-loop mistakes get a 400 worded like the real APIs, raised by the real SDKs."""
# mypy: disable-error-code="arg-type, list-item"
# (these requests are malformed on purpose: the SDKs' types refuse what the tests send)

from __future__ import annotations

import anthropic
import openai
import pytest

from labkit.lessons import make_client
from labkit.simulator import MODEL_NAME
from labkit.trace import Trace

TOOL_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ANTHROPIC_TOOLS = [{"name": "get_weather", "description": "Weather for a city.", "input_schema": TOOL_SCHEMA}]
CHAT_TOOLS = [{"type": "function", "function": {"name": "get_weather", "parameters": TOOL_SCHEMA, "strict": False}}]
RESPONSES_TOOLS = [{"type": "function", "name": "get_weather", "parameters": TOOL_SCHEMA, "strict": False}]
TOOL_USE = {
    "role": "assistant",
    "content": [{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}],
}
ASKED = {"role": "user", "content": "Weather in Oslo?"}


@pytest.fixture
def trace() -> Trace:
    return Trace()


@pytest.fixture
def claude(trace: Trace) -> anthropic.Anthropic:
    return make_client("anthropic", trace=trace, sync=True, env={})


@pytest.fixture
def gpt(trace: Trace) -> openai.OpenAI:
    return make_client("openai", trace=trace, sync=True, env={})


def anthropic_error(client: anthropic.Anthropic, messages: list, tools: list = ANTHROPIC_TOOLS) -> str:
    with pytest.raises(anthropic.BadRequestError) as caught:
        client.messages.create(model=MODEL_NAME, max_tokens=256, messages=messages, tools=tools)
    assert caught.value.response.headers["x-should-retry"] == "false"
    return str(caught.value)


def test_tool_use_without_tool_result(claude: anthropic.Anthropic) -> None:
    message = anthropic_error(claude, [ASKED, TOOL_USE, {"role": "user", "content": "and?"}])
    assert (
        "[simulated] messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1"
        in message
    )


def test_tool_result_not_first(claude: anthropic.Anthropic) -> None:
    late = {
        "role": "user",
        "content": [
            {"type": "text", "text": "here:"},
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "8°C"},
        ],
    }
    assert "messages.2.content.1: tool_result blocks must come first" in anthropic_error(
        claude, [ASKED, TOOL_USE, late]
    )


def test_tool_result_for_an_unknown_call(claude: anthropic.Anthropic) -> None:
    stray = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "8°C"}]}
    message = anthropic_error(claude, [ASKED, TOOL_USE, stray])
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_9" in message


def test_anthropic_tool_name_with_a_dot(claude: anthropic.Anthropic) -> None:
    dotted = [{**ANTHROPIC_TOOLS[0], "name": "weather.get"}]
    assert "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'" in anthropic_error(
        claude, [ASKED], dotted
    )


def test_no_retry_happens(claude: anthropic.Anthropic, trace: Trace) -> None:
    anthropic_error(claude, [ASKED, TOOL_USE])
    assert len(trace.of_kind("model.request")) == 1


def test_chat_tool_calls_not_answered(gpt: openai.OpenAI) -> None:
    call = {
        "role": "assistant",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}],
    }
    with pytest.raises(openai.BadRequestError) as caught:
        gpt.chat.completions.create(
            model=MODEL_NAME, messages=[ASKED, call, {"role": "user", "content": "and?"}], tools=CHAT_TOOLS
        )
    assert (
        "[simulated] An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        "'tool_call_id'" in str(caught.value)
    )
    assert "call_1" in str(caught.value) and caught.value.param == "messages.[1].role"


def test_chat_tool_message_without_a_call(gpt: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="must be a response to a preceeding message with 'tool_calls'"):
        gpt.chat.completions.create(
            model=MODEL_NAME, messages=[ASKED, {"role": "tool", "tool_call_id": "call_1", "content": "8"}]
        )


def test_chat_tool_name_with_a_dot(gpt: openai.OpenAI) -> None:
    tools = [{"type": "function", "function": {"name": "weather.get", "parameters": TOOL_SCHEMA}}]
    with pytest.raises(
        openai.BadRequestError, match=r"Invalid 'tools\[0\].function.name': string does not match pattern"
    ):
        gpt.chat.completions.create(model=MODEL_NAME, messages=[ASKED], tools=tools)


def test_responses_unknown_previous_response_id(gpt: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match=r"\[simulated\] Previous response with id 'resp_nope' not found."):
        gpt.responses.create(model=MODEL_NAME, previous_response_id="resp_nope", input="hi")


def test_responses_output_without_a_call(gpt: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="No tool call found for function call output with call_id call_7"):
        gpt.responses.create(
            model=MODEL_NAME, input=[ASKED, {"type": "function_call_output", "call_id": "call_7", "output": "8"}]
        )


def test_responses_call_without_an_output(gpt: openai.OpenAI) -> None:
    call = {"type": "function_call", "call_id": "call_7", "name": "get_weather", "arguments": "{}"}
    with pytest.raises(openai.BadRequestError, match="No tool output found for function call call_7"):
        gpt.responses.create(model=MODEL_NAME, input=[ASKED, call], tools=RESPONSES_TOOLS)


def test_responses_tool_name_too_long(gpt: openai.OpenAI) -> None:
    tools = [{**RESPONSES_TOOLS[0], "name": "x" * 65}]
    with pytest.raises(openai.BadRequestError, match=r"Invalid 'tools\[0\].name'"):
        gpt.responses.create(model=MODEL_NAME, input="hi", tools=tools)


def test_streaming_is_refused_honestly(gpt: openai.OpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="does not stream"):
        gpt.chat.completions.create(model=MODEL_NAME, messages=[ASKED], stream=True)
