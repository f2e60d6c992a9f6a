"""The logs server over stdio and HTTP in both eras: answers from the store, and each of its four duties."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import stdio_client

from labkit.host import stdio_params
from servers.systems.log_store import LAST_NIGHT, NOW
from tests.servers_helpers import (
    LabServer,
    assert_tool_error,
    assert_unknown_tool,
    client_fixture,
    query,
    server_fixture,
    text_of,
)

server = server_fixture("logs")
client = client_fixture()
restricted = server_fixture("logs", "--allow", "order-service", "--rate-limit", "3", fixture_name="restricted")

GOOD = {"service": "order-service", "since": "2026-10-29T20:00"}
pytestmark = pytest.mark.anyio


def _errors_by_hour(server: LabServer, service: str) -> dict[str, int]:
    rows = query(
        server.data / "logs.sqlite",
        "SELECT substr(ts, 1, 13) || ':00', COUNT(*) FROM logs WHERE service = ? AND level = 'ERROR'"
        " AND ts >= ? AND ts < ? GROUP BY 1",
        service,
        LAST_NIGHT.isoformat(),
        NOW.isoformat(),
    )
    return dict(rows)


async def _assert_still_serving(client: Client) -> None:
    result = await client.call_tool("query_errors", GOOD)
    assert not result.is_error and result.structured_content["total"] > 0


async def test_the_tool_is_listed_read_only_with_an_output_schema(client: Client) -> None:
    (tool,) = (await client.list_tools()).tools
    assert tool.name == "query_errors"
    assert tool.annotations.read_only_hint is True
    assert {"total", "peak_hour", "hourly", "top_errors"} <= set(tool.output_schema["properties"])
    assert set(tool.input_schema["required"]) == {"service", "since"}


async def test_last_night_matches_the_store(client: Client, server: LabServer) -> None:
    result = await client.call_tool("query_errors", GOOD)

    expected = _errors_by_hour(server, "order-service")
    report = result.structured_content
    assert not result.is_error
    assert report["total"] == sum(expected.values())
    assert {point["hour"]: point["errors"] for point in report["hourly"] if point["errors"]} == expected
    assert report["peak_hour"] == max(expected, key=expected.__getitem__)
    assert report["top_errors"][0]["code"] == "DB_POOL_EXHAUSTED"
    assert f"{report['total']} errors" in text_of(result) and report["peak_hour"] in text_of(result)


async def test_a_malformed_since_is_an_execution_error_naming_the_format(client: Client) -> None:
    result = await client.call_tool("query_errors", {"service": "order-service", "since": "yesterday 8pm"})
    assert_tool_error(result, "since must look like 2026-10-29T20:00")
    await _assert_still_serving(client)


async def test_a_wrong_argument_type_is_an_execution_error(client: Client) -> None:
    result = await client.call_tool("query_errors", {"service": "order-service", "since": 20261029})
    assert_tool_error(result, "since")
    await _assert_still_serving(client)


async def test_an_unknown_service_lists_the_readable_ones(client: Client) -> None:
    result = await client.call_tool("query_errors", {"service": "billing-service", "since": "2026-10-29T20:00"})
    assert_tool_error(result, "unknown service 'billing-service'", "order-service", "payment-service")
    await _assert_still_serving(client)


async def test_an_unknown_tool_is_a_protocol_error(client: Client) -> None:
    await assert_unknown_tool(client, "query_error")
    await _assert_still_serving(client)


async def test_log_lines_come_back_without_terminal_escapes(client: Client, server: LabServer) -> None:
    raw = query(server.data / "logs.sqlite", "SELECT message FROM logs WHERE code = 'GATEWAY_5XX' LIMIT 1")[0][0]
    assert "\x1b[" in raw  # the store really holds colour codes

    result = await client.call_tool("query_errors", {**GOOD, "service": "payment-service"})
    messages = [error["message"] for error in result.structured_content["top_errors"]]
    assert "gateway returned 502 Bad Gateway" in messages
    assert not any(char < " " for text in [*messages, text_of(result)] for char in text.replace("\n", ""))


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_caller_may_read_only_the_allowed_services(restricted: LabServer, mode: str) -> None:
    async with restricted.client("http", mode, caller=f"reader-{mode}") as reader:
        refused = await reader.call_tool("query_errors", {**GOOD, "service": "payment-service"})
        allowed = await reader.call_tool("query_errors", GOOD)
    assert_tool_error(refused, f"caller 'reader-{mode}' may not read 'payment-service'", "order-service")
    assert not allowed.is_error


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_each_caller_has_its_own_rate_limit(restricted: LabServer, mode: str) -> None:
    async with restricted.client("http", mode, caller=f"busy-{mode}") as busy:
        results = [await busy.call_tool("query_errors", GOOD) for _ in range(4)]
    async with restricted.client("http", mode, caller=f"calm-{mode}") as calm:
        other = await calm.call_tool("query_errors", GOOD)

    assert [result.is_error for result in results] == [False, False, False, True]
    assert_tool_error(results[-1], "rate limit: at most 3 calls per minute", f"busy-{mode}")
    assert not other.is_error


async def test_the_server_reports_its_inside_work_to_the_events_file(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    params = stdio_params("logs", env={"LABKIT_DATA_DIR": str(tmp_path), "LABKIT_EVENTS_FILE": str(events)})
    with tempfile.TemporaryFile(mode="w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            await client.call_tool("query_errors", {**GOOD, "since": "yesterday"})
            result = await client.call_tool("query_errors", GOOD)

    reported = [json.loads(line) for line in events.read_text().splitlines()]
    assert [(e["src"], e["dst"], e["kind"]) for e in reported] == [
        ("server", "system", "server.query"),
        ("system", "server", "system.answer"),
    ]
    assert reported[1]["payload"]["total"] == result.structured_content["total"]
