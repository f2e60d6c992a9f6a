"""A lab HTTP server's port is its host's until the host is done with it: a server that dies frees nothing.

Another process (learner B on a shared machine) that could bind a dead server's port would receive what A's host
sends there (the URL's secret and the call's arguments) and answer in the server's name. B plays that part here.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest
from mcp import Client, MCPError

from labkit import Host, ServerSpec, Trace
from labkit.host import http_server

# Learner B, in a process of their own: every way to bind a port, the most permissive ones included.
_TAKE_OVER = """
import json, socket, sys
outcome = {}
for options in ([], ["SO_REUSEADDR"], ["SO_REUSEADDR", "SO_REUSEPORT"]):
    attempt = socket.socket()
    for option in options:
        attempt.setsockopt(socket.SOL_SOCKET, getattr(socket, option), 1)
    try:
        attempt.bind(("127.0.0.1", int(sys.argv[1])))
        attempt.listen()
        outcome["+".join(options) or "plain"] = "bound"
    except OSError as error:
        outcome["+".join(options) or "plain"] = error.strerror
    attempt.close()
print(json.dumps(outcome))
"""
ARGUMENTS = {"service": "order-service", "since": "2026-10-29T20:00"}


def _take_over(port: int) -> dict[str, str]:
    probe = subprocess.run([sys.executable, "-c", _TAKE_OVER, str(port)], capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    return json.loads(probe.stdout)


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _server(name: str) -> psutil.Process:
    """The lab server `name` this process started (a child of its supervisor, or of the warm Python)."""
    servers = [
        child
        for child in psutil.Process().children(recursive=True)
        if child.cmdline()[1:3] == ["-m", f"servers.{name}"]
    ]
    assert len(servers) == 1, [server.cmdline() for server in servers]
    return servers[0]


def _kill_server(name: str) -> None:
    server = _server(name)
    server.kill()
    server.wait(timeout=30)


@pytest.mark.parametrize("warm", ["1", "0"])
async def test_a_dead_servers_port_cannot_be_taken_and_its_url_says_the_server_ended(
    warm: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LABKIT_WARM_START", warm)
    with http_server("logs", env={"LABKIT_DATA_DIR": str(tmp_path)}) as url:
        port = urlsplit(url).port
        assert port is not None
        async with Client(url) as client:
            assert (await client.list_tools()).tools
        _kill_server("logs")
        assert set(_take_over(port).values()) == {"Address already in use"}
        with pytest.raises(BaseException) as caught:  # the SDK's client may raise a group
            async with Client(url) as client:
                await client.list_tools()
        said = [str(error) for error in _leaves(caught.value) if isinstance(error, MCPError)]
        assert said and all("'logs' server" in text and "ended" in text for text in said), said
    # The block is over: the URL is no longer used, and the port is free again (a plain bind may still meet the
    # connections the host closed, in TIME_WAIT).
    assert _take_over(port)["SO_REUSEADDR"] == "bound"


async def test_a_server_the_host_starts_again_keeps_its_port_and_nobody_takes_it_in_between(tmp_path: Path) -> None:
    spec = ServerSpec("logs", transport="http", env={"LABKIT_DATA_DIR": str(tmp_path)})
    async with Host(Trace(), [spec]) as host:
        (port,) = {sock.laddr.port for sock in _server("logs").net_connections("tcp") if sock.status == "LISTEN"}
        assert not (await host.call("query_errors", ARGUMENTS)).is_error
        _kill_server("logs")
        assert set(_take_over(port).values()) == {"Address already in use"}
        after_crash = await host.call("query_errors", ARGUMENTS)
        assert after_crash.is_error and "restarted" in after_crash.text, after_crash.text
        assert port in {sock.laddr.port for sock in _server("logs").net_connections("tcp") if sock.status == "LISTEN"}
        assert not (await host.call("query_errors", ARGUMENTS)).is_error
        assert set(_take_over(port).values()) == {"Address already in use"}


async def test_a_connection_that_sends_nothing_to_a_dead_servers_port_holds_up_neither_its_restart_nor_others(
    tmp_path: Path,
) -> None:
    # Learner B sees the crash (in /proc) and opens a connection to the port that never sends a request: the host's
    # answer on the port must not wait on it, nor must the server's restart, which ends that answering first.
    spec = ServerSpec("logs", transport="http", env={"LABKIT_DATA_DIR": str(tmp_path)})
    async with Host(Trace(), [spec]) as host:
        (port,) = {sock.laddr.port for sock in _server("logs").net_connections("tcp") if sock.status == "LISTEN"}
        assert not (await host.call("query_errors", ARGUMENTS)).is_error
        _kill_server("logs")
        with socket.create_connection(("127.0.0.1", port)) as silent:
            after_crash = await host.call("query_errors", ARGUMENTS)
            assert after_crash.is_error and "restarted" in after_crash.text, after_crash.text
            assert not (await host.call("query_errors", ARGUMENTS)).is_error
            assert silent.fileno() != -1
