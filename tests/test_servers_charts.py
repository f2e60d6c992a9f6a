"""The charts server: input_required + requestState (2026-07-28), elicitation/create (2025-11-25), shared keys."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any, Literal

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolResult,
    ElicitResult,
    InputRequiredResult,
)

from labkit._i18n import in_language
from labkit.host import http_server, stdio_transport
from labkit.trace import Trace
from servers.charts import QUESTION
from tests.servers_helpers import (
    CONNECTIONS,
    TRANSPORT_MODES,
    LabServer,
    assert_tool_error,
    assert_unknown_tool,
    raw_modern_request,
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
chinese = server_fixture(
    "charts", env={"LABKIT_REQUEST_STATE_KEY": KEY_A, "LABKIT_LANG": "zh_CN"}, fixture_name="chinese"
)
pytestmark = pytest.mark.anyio

Action = Literal["accept", "decline", "cancel"]


class _User:
    """An elicitation callback that records each question and gives one fixed answer."""

    def __init__(self, action: Action, space: str | None = None) -> None:
        self.action, self.space = action, space
        self.asked: list[str] = []

    async def __call__(self, context: object, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        return ElicitResult(action=self.action, content={"space": self.space} if self.space else None)


def _asking_client(server: LabServer, transport: str) -> Client:
    """A 2026-07-28 client that declares form elicitation; the tests drive its rounds by hand."""
    return server.client(transport, "auto", elicitation_callback=_User("accept", "personal"))


async def _round_one(client: Client) -> InputRequiredResult:
    result = await client.session.call_tool("render_error_trend", ARGS, allow_input_required=True)
    assert isinstance(result, InputRequiredResult)
    return result


async def _retry(
    client: Client, state: str | None, space: str = "personal", action: Action = "accept", args: dict[str, str] = ARGS
) -> Any:
    answer = ElicitResult(action=action, content={"space": space} if action == "accept" else None)
    return await client.session.call_tool(
        "render_error_trend", args, input_responses={"space": answer}, request_state=state, allow_input_required=True
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
    async with _asking_client(server, transport) as client:
        asked = await _round_one(client)
        saved = await _retry(client, asked.request_state, "personal")

    question = asked.input_requests["space"].params
    assert question.message == QUESTION
    assert question.requested_schema["properties"]["space"]["enum"] == ["personal", "team"]
    assert asked.request_state.startswith("v1.")
    _assert_saved(saved, server.data, "personal")


async def test_a_server_started_in_chinese_asks_its_question_in_chinese(chinese: LabServer) -> None:
    async with _asking_client(chinese, "http") as client:
        asked = await _round_one(client)
    question = asked.input_requests["space"].params
    field = question.requested_schema["properties"]["space"]
    assert question.message == in_language("zh_CN", QUESTION)
    assert field["title"] == in_language("zh_CN", "Space")
    assert field["description"] == in_language("zh_CN", "personal: only you can see it; team: everyone on the team can")
    assert field["enum"] == ["personal", "team"], "the values stay what the server checks"


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
async def test_no_choice_means_no_chart(server: LabServer, connection: tuple[str, str], action: Action) -> None:
    async with server.client(*connection, elicitation_callback=_User(action)) as client:
        refused = await client.call_tool("render_error_trend", {**ARGS, "since": "2026-10-29T21:00"})
        await assert_unknown_tool(client, "render_chart")
        served = await client.call_tool("render_error_trend", {**ARGS, "since": "nonsense"})
    assert_tool_error(refused, "chart not saved", repr(action))
    assert_tool_error(served, "since must look like 2026-10-29T20:00")
    assert not list((server.data / "spaces").glob("*/order-service_20261029T2100_*"))


@pytest.mark.parametrize("connection", CONNECTIONS)
async def test_a_client_that_cannot_answer_is_never_asked(server: LabServer, connection: tuple[str, str]) -> None:
    # 2026-07-28 has a protocol error for this (-32021); 2025-11-25 has none, so the tool reports it as isError.
    transport, mode = connection
    async with server.client(transport, mode) as client:
        if mode == "legacy":
            assert_tool_error(await client.call_tool("render_error_trend", ARGS), "this client cannot answer")
        else:
            with pytest.raises(MCPError) as raised:
                await client.session.call_tool("render_error_trend", ARGS, allow_input_required=True)
            assert raised.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
            assert raised.value.data == {"requiredCapabilities": {"elicitation": {"form": {}}}}
            assert QUESTION in raised.value.message
        await assert_unknown_tool(client, "render_chart")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_the_missing_capability_error_on_the_wire(server: LabServer, transport: str) -> None:
    """What the conformance harness sends: a bare 2026-07-28 request whose _meta declares no capabilities."""
    params = {"name": "render_error_trend", "arguments": ARGS}
    reply, status = await raw_modern_request(server, transport, "tools/call", params)
    assert reply["error"]["code"] == -32021 and "result" not in reply
    assert status in (None, 400)  # stdio has no status; HTTP answers this error with 400 Bad Request


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_second_use_of_one_state_returns_the_first_save_and_writes_nothing(
    server: LabServer, transport: str
) -> None:
    # A replay and a retry after a lost reply look the same to the server: same sealed state, same arguments.
    args = {**ARGS, "since": "2026-10-29T22:00"}
    async with _asking_client(server, transport) as client:
        state = (await client.session.call_tool("render_error_trend", args, allow_input_required=True)).request_state
        first = await _retry(client, state, "team", args=args)
        chart = server.data / first.structured_content["path"]
        chart.write_bytes(b"left alone")
        second = await _retry(client, state, "personal", args=args)
        fresh_round = await client.session.call_tool("render_error_trend", args, allow_input_required=True)
    assert not first.is_error and not second.is_error, text_of(second)
    assert second.structured_content == first.structured_content
    assert "Already saved" in text_of(second) and chart.read_bytes() == b"left alone"
    assert not (server.data / "spaces" / "personal" / chart.name).exists()
    assert isinstance(fresh_round, InputRequiredResult) and fresh_round.request_state != state


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_null_input_responses_are_an_error_not_a_new_question(server: LabServer, transport: str) -> None:
    params = {"name": "render_error_trend", "arguments": ARGS, "inputResponses": None}
    reply, _ = await raw_modern_request(server, transport, "tools/call", params, elicitation=True)
    assert reply["error"]["code"] == INVALID_PARAMS and "inputResponses" in reply["error"]["message"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_tampered_or_missing_state_is_refused(server: LabServer, transport: str) -> None:
    async with _asking_client(server, transport) as client:
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
    async with _asking_client(server, "http") as first:
        state = (await _round_one(first)).request_state
    async with _asking_client(twin, "http") as second:
        accepted = await _retry(second, state, "team")
    async with _asking_client(stranger, "http") as third:
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
