"""The charts server: input_required + requestState (2026-07-28), elicitation/create (2025-11-25), shared keys."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, ElicitResult, InputRequiredResult

from labkit.host import http_server, stdio_transport
from labkit.trace import Trace
from servers.charts import QUESTION
from tests.servers_helpers import (
    CONNECTIONS,
    TRANSPORT_MODES,
    LabServer,
    assert_tool_error,
    assert_unknown_tool,
    server_fixture,
    text_of,
)

KEY_A = "a-request-state-key-of-at-least-32-bytes"
KEY_B = "another-request-state-key-of-32-bytes-or-more"
ARGS = {"service": "order-service", "since": "2026-10-29T20:00"}
CHART = "order-service_20261029T2000_20261030T0900.png"

server = server_fixture("charts", env={"LABKIT_REQUEST_STATE_KEY": KEY_A})
twin = server_fixture("charts", env={"LABKIT_REQUEST_STATE_KEY": KEY_A}, fixture_name="twin")
stranger = server_fixture("charts", env={"LABKIT_REQUEST_STATE_KEY": KEY_B}, fixture_name="stranger")
pytestmark = pytest.mark.anyio


class _User:
    """An elicitation callback that records each question and gives one fixed answer."""

    def __init__(self, action: str, space: str | None = None) -> None:
        self.action, self.space, self.asked = action, space, []

    async def __call__(self, context: object, params: object) -> ElicitResult:
        self.asked.append(params.message)
        return ElicitResult(action=self.action, content={"space": self.space} if self.space else None)


async def _round_one(client: Client) -> InputRequiredResult:
    result = await client.session.call_tool("render_error_trend", ARGS, allow_input_required=True)
    assert isinstance(result, InputRequiredResult)
    return result


async def _retry(client: Client, state: str | None, space: str = "personal", action: str = "accept") -> CallToolResult:
    answer = ElicitResult(action=action, content={"space": space} if action == "accept" else None)
    return await client.session.call_tool(
        "render_error_trend", ARGS, input_responses={"space": answer}, request_state=state, allow_input_required=True
    )


def _assert_saved(result: CallToolResult, data: Path, space: str) -> None:
    assert not result.is_error, text_of(result)
    saved = result.structured_content
    png = (data / saved["path"]).read_bytes()
    assert saved["space"] == space and saved["path"] == f"spaces/{space}/{CHART}"
    assert png.startswith(b"\x89PNG") and base64.b64decode(result.content[0].data) == png
    assert saved["total"] == sum(point["errors"] for point in saved["points"]) > 0
    assert saved["path"] in text_of(result)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_round_one_asks_and_the_retry_with_the_same_state_saves(server: LabServer, transport: str) -> None:
    async with server.client(transport, "auto") as client:
        asked = await _round_one(client)
        saved = await _retry(client, asked.request_state, "personal")

    question = asked.input_requests["space"].params
    assert question.message == QUESTION
    assert question.requested_schema["properties"]["space"]["enum"] == ["personal", "team"]
    assert asked.request_state.startswith("v1.")
    _assert_saved(saved, server.data, "personal")


async def test_the_retry_is_a_new_request_carrying_the_state_byte_for_byte(server: LabServer) -> None:
    trace = Trace()
    async with Client(
        stdio_transport("charts", trace, env=server.env, errlog=server.errlog),
        elicitation_callback=_User("accept", "team"),
    ) as client:
        result = await client.call_tool("render_error_trend", ARGS)

    calls = [event.payload for event in trace if event.payload and event.payload.get("method") == "tools/call"]
    assert len(calls) == 2 and calls[0]["id"] != calls[1]["id"]
    assert "requestState" not in calls[0]["params"]
    assert calls[1]["params"]["inputResponses"]["space"]["content"] == {"space": "team"}
    _assert_saved(result, server.data, "team")


@pytest.mark.parametrize("connection", CONNECTIONS)
async def test_the_client_driver_answers_in_either_era(server: LabServer, connection: tuple[str, str]) -> None:
    user = _User("accept", "team")
    async with server.client(*connection, elicitation_callback=user) as client:
        result = await client.call_tool("render_error_trend", ARGS)
    assert user.asked == [QUESTION]  # 2025-11-25: an elicitation/create request; 2026-07-28: an input request
    _assert_saved(result, server.data, "team")


@pytest.mark.parametrize(
    ("action", "connection"),
    [
        *(pytest.param("decline", pair, id=f"decline-{'-'.join(pair)}") for pair in TRANSPORT_MODES),
        *(pytest.param("cancel", ("http", mode), id=f"cancel-http-{mode}") for mode in ("auto", "legacy")),
    ],
)
async def test_no_choice_means_no_chart(server: LabServer, connection: tuple[str, str], action: str) -> None:
    async with server.client(*connection, elicitation_callback=_User(action)) as client:
        refused = await client.call_tool("render_error_trend", {**ARGS, "since": "2026-10-29T21:00"})
        await assert_unknown_tool(client, "render_chart")
        served = await client.call_tool("render_error_trend", {**ARGS, "since": "nonsense"})
    assert_tool_error(refused, "chart not saved", repr(action))
    assert_tool_error(served, "since must look like 2026-10-29T20:00")
    assert not list((server.data / "spaces").glob("*/order-service_20261029T2100_*"))


async def test_a_legacy_client_that_cannot_answer_is_told_so_and_never_asked(server: LabServer) -> None:
    async with server.client("http", "legacy") as client:
        result = await client.call_tool("render_error_trend", ARGS)
        assert_tool_error(result, "chart not saved: this client cannot answer the question")
        await assert_unknown_tool(client, "render_chart")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_tampered_or_missing_state_is_refused(server: LabServer, transport: str) -> None:
    async with server.client(transport, "auto") as client:
        state = (await _round_one(client)).request_state
        tampered = state[:-2] + ("AA" if not state.endswith("AA") else "BB")
        with pytest.raises(MCPError) as raised:
            await _retry(client, tampered)
        missing = await _retry(client, None)
        after = await _retry(client, state, "team")
    assert raised.value.code == INVALID_PARAMS
    assert_tool_error(missing, "requestState")
    _assert_saved(after, server.data, "team")


async def test_servers_sharing_a_key_accept_each_others_state(
    server: LabServer, twin: LabServer, stranger: LabServer
) -> None:
    async with server.client("http", "auto") as first:
        state = (await _round_one(first)).request_state
    async with twin.client("http", "auto") as second:
        accepted = await _retry(second, state, "team")
    async with stranger.client("http", "auto") as third:
        with pytest.raises(MCPError) as raised:
            await _retry(third, state, "team")
    _assert_saved(accepted, twin.data, "team")
    assert raised.value.code == INVALID_PARAMS and "requestState" in raised.value.message


def test_a_short_sealing_key_stops_the_server_with_a_clear_message(tmp_path: Path) -> None:
    env = {"LABKIT_REQUEST_STATE_KEY": "too-short", "LABKIT_DATA_DIR": str(tmp_path)}
    with (
        pytest.raises(RuntimeError, match="LABKIT_REQUEST_STATE_KEY must be at least 32 bytes, got 9"),
        http_server("charts", env=env),
    ):
        pass
