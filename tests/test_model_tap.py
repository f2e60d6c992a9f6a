"""The modeltap records what the SDK sent and got, hides keys, and runs are byte-reproducible."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import openai
import pytest

from labkit.host import Conversation
from labkit.lessons import make_client
from labkit.simulator import MODEL_NAME, TeachingModel, TeachingServer, teaching_transport
from labkit.trace import ModelTap, Trace

TOOLS = [
    {
        "name": "weather.get",
        "description": "Get the current weather for a city. Use when asked about weather.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    }
]


@pytest.mark.anyio
@pytest.mark.parametrize("api", ["anthropic", "chat", "responses"])
async def test_records_each_request_and_response(api: str) -> None:
    trace = Trace()
    client = make_client("anthropic" if api == "anthropic" else "openai", trace=trace, env={})
    conversation = Conversation(client, MODEL_NAME, TOOLS, api=api)  # type: ignore[arg-type]
    conversation.add_user("What's the weather in Oslo?")
    turn = await conversation.ask()
    request, response = trace.events
    assert (request.src, request.dst, request.kind) == ("host", "model", "model.request")
    assert request.payload["method"] == "POST" and request.payload["path"].startswith("/v1/")
    assert request.payload["body"]["model"] == MODEL_NAME
    assert request.payload["headers"]["authorization"] == "Bearer offline"
    assert (response.src, response.dst, response.kind) == ("model", "host", "model.response")
    assert response.payload["status"] == 200 and response.ref == turn.response_id
    assert response.summary.endswith("weather_get") and response.name == "weather_get"
    assert response.meta["call_ids"] == [turn.tool_calls[0].id] and response.meta["simulated"] is True
    assert turn.tool_calls[0].name == "weather.get"  # the reverse name map at work


def test_redacts_a_real_key_and_never_changes_the_traffic() -> None:
    trace = Trace()
    tap = ModelTap(teaching_transport(), trace)
    client = openai.OpenAI(
        api_key="sk-very-secret",
        base_url="http://teaching-model.invalid/v1",
        max_retries=0,
        http_client=httpx2.Client(transport=tap),
        _strict_response_validation=True,
    )
    completion = client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "hello"}])
    assert "sk-very-secret" not in trace.to_json()
    assert trace[0].payload["headers"]["authorization"] == "Bearer [redacted]"
    assert completion.choices[0].message.content == trace[1].payload["body"]["choices"][0]["message"]["content"]
    assert trace[1].summary.startswith("text: [simulated] ")


def test_records_errors_with_their_status() -> None:
    trace = Trace()
    client = make_client("openai", trace=trace, sync=True, env={})
    with pytest.raises(openai.BadRequestError):
        client.responses.create(model=MODEL_NAME, previous_response_id="resp_nope", input="hi")
    assert trace[1].meta["status"] == 400 and trace[1].summary.startswith("400 [simulated] Previous response")


def canonical_bodies(**client_options: Any) -> list[str]:
    trace = Trace()
    with make_client("anthropic", trace=trace, sync=True, env={}, **client_options) as client:
        messages: list = [
            {"role": "user", "content": "Why did order-service errors rise last night? Make a trend chart."}
        ]
        tools = [
            {"name": n, "description": "Error tool.", "input_schema": {"type": "object", "properties": {}}}
            for n in ("query_errors", "render_error_trend")
        ]
        for _ in range(3):
            message = client.messages.create(model=MODEL_NAME, max_tokens=256, messages=messages, tools=tools)
            messages.append({"role": "assistant", "content": message.content})
            results = [
                {"type": "tool_result", "tool_use_id": b.id, "content": '{"total": 7}'}
                for b in message.content
                if b.type == "tool_use"
            ]
            messages.append({"role": "user", "content": results or "thanks"})
    return [repr(e.payload["body"]) for e in trace]


def test_two_runs_give_identical_bodies() -> None:
    first, second = canonical_bodies(), canonical_bodies()
    assert first == second and len(first) == 6
    assert "toolu_sim_" in first[1] and "msg_sim_" in first[1]


def test_the_real_http_server_gives_the_same_bodies() -> None:
    with TeachingServer(TeachingModel()) as server:
        assert server.url.startswith("http://127.0.0.1:")
        over_http = canonical_bodies(base_url=server.url)
    assert over_http == canonical_bodies()


def test_sync_and_async_clients_are_the_real_sdk_classes() -> None:
    assert isinstance(make_client("anthropic", env={}), anthropic.AsyncAnthropic)
    assert isinstance(make_client("openai", sync=True, env={}), openai.OpenAI)
