"""Degrade, don't fail: a server that cannot start is set aside and said so; the servers beside it keep working."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from labkit.host import Host, ServerMessageTooLarge, ServerSpec, ServerStartError
from labkit.lessons import prepare_lab
from labkit.processes import free_port
from labkit.security import Defences, PinStore, Shield
from labkit.trace import Trace

MISSING = ServerSpec("untrusted.missing")
SILENT = ServerSpec("silent", command=sys.executable, args=("-c", "import sys; sys.stdin.read()"))
QUERY = {"service": "order-service", "since": "2026-10-29T20:00"}


@pytest.mark.parametrize("broken", [MISSING, SILENT], ids=["exits", "never-answers"])
async def test_a_server_that_cannot_start_is_set_aside_and_the_one_beside_it_answers(broken):
    trace = Trace()
    with anyio.fail_after(120):
        async with Host(trace, [broken, ServerSpec("logs")], start_timeout=10) as host:
            result = await host.call("query_errors", QUERY)
            gone = await host.call("read_file", {"path": "notes.md"})
            prompt = host.system_prompt("You help the operations team.")
    assert host.up == ["logs"] and list(host.unavailable) == [broken.name]
    assert isinstance(host.unavailable[broken.name], ServerStartError)
    assert not result.is_error and '"total"' in result.text
    (said,) = trace.of_kind("host.unavailable")
    assert said.dst == "user" and said.meta["server"] == broken.name and broken.name in said.summary
    assert gone.is_error and f"The {broken.name} server is unavailable" in gone.text
    assert prompt.startswith("You help") and "Unavailable MCP servers (they could not be started; " in prompt
    assert "query_errors" in [t.name for t in host.tools]


async def test_when_no_server_starts_the_host_raises_the_error_that_names_it():
    with anyio.fail_after(60), pytest.raises(ServerStartError, match=r"No module named servers\.untrusted\.missing"):
        async with Host(Trace(), [MISSING]):
            pass


async def test_a_url_where_nothing_answers_is_one_error_naming_the_server_and_the_address():
    url = f"http://127.0.0.1:{free_port()}/mcp"  # a port nobody holds: the connection is refused
    trace = Trace()
    with anyio.fail_after(120):
        async with Host(trace, [ServerSpec("remote", url=url), ServerSpec("logs")]) as host:
            assert host.up == ["logs"]
        with pytest.raises(ServerStartError) as alone:
            async with Host(Trace(), [ServerSpec("remote", url=url)]):
                pass
    for error in (host.unavailable["remote"], alone.value):
        assert isinstance(error, ServerStartError) and (error.server, error.command) == ("remote", url)
        assert f"nothing answers at {url.split('/')[2]}" in str(error)


async def test_the_shield_says_which_servers_are_up(tmp_path):
    trace = Trace()
    shield = Shield(trace, Defences.all(), lab=prepare_lab(), pins=PinStore(tmp_path / "pins.json"))
    with anyio.fail_after(120):
        async with shield.open([MISSING, ServerSpec("logs")]) as host:
            result = await host.call("logs__query_errors", QUERY)
            up, down = shield.up, shield.unavailable
    assert up == ["logs"] and list(down) == ["untrusted.missing"] and not result.is_error
    notes = [e for e in trace.of_kind("host.note") if "confined" in e.meta]
    assert {e.meta["server"] for e in notes} == {"logs", "untrusted.missing"}


async def test_a_tool_list_over_the_message_limit_sets_its_server_aside_and_says_so() -> None:
    """The listing itself is the message too large: its connection ends as it is read; the host names the sizes and
    goes on with the server beside it (alone, it raises that account instead of a bare 'Connection closed')."""
    flooding = ServerSpec(
        "flooding", command=sys.executable, args=(str(Path(__file__).with_name("flooding_server.py")),)
    )
    trace = Trace()
    with anyio.fail_after(120):
        async with Host(trace, [flooding, ServerSpec("logs")]) as host:
            answer = await host.call("query_errors", QUERY)
        with pytest.raises(ServerMessageTooLarge):
            async with Host(Trace(), [flooding]):
                pass
    assert host.up == ["logs"] and not answer.is_error
    assert isinstance(host.unavailable["flooding"], ServerMessageTooLarge)
    (said,) = trace.of_kind("host.unavailable")
    assert said.meta["server"] == "flooding" and "LABKIT_MAX_RESULT_BYTES" in said.summary
