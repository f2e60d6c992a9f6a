"""The fault suite: each fault replayed against real server processes, under a hard limit, with no process left.

Every test here runs under `anyio.fail_after` (a hang guard, not a timing claim); the `_no_orphans`
fixture in conftest.py fails any test that leaves a server running.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest

from labkit.host import GatePolicy, Host, ServerSpec, ServerStartError, http_server
from labkit.trace import Trace

FAULTY = GatePolicy(auto_approve=frozenset({"sleep_for", "crash_now", "render_error_trend"}))
TRANSPORTS = ["stdio", "http"]
LIMIT = 90
CHART_ARGS = {"service": "order-service", "since": "2026-10-29T20:00"}


def _server_processes(module: str) -> list[psutil.Process]:
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if f"servers.{module}" in child.cmdline() and "_supervisor.py" not in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


def _restarted(trace: Trace, text: str) -> bool:
    return len(trace.of_kind("host.restart")) == 1 and "the host restarted it" in text


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_crash_mid_call_is_noticed_restarted_once_and_the_next_call_works(transport: str) -> None:
    trace = Trace()
    with anyio.fail_after(LIMIT):
        async with Host(trace, [ServerSpec("faulty", transport=transport)], policy=FAULTY) as host:
            crashed = await host.call("crash_now")
            after = await host.call("sleep_for", {"seconds": 0})
    assert crashed.is_error and _restarted(trace, crashed.text)
    assert after.text == "slept 0 s" and not after.is_error


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_server_that_dies_between_the_two_input_rounds_is_restarted_and_the_model_told(transport: str) -> None:
    async def kill_the_server_then_answer(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        for process in _server_processes("charts"):
            process.kill()
            process.wait(5)
        return {"space": "personal"}

    trace = Trace()
    with anyio.fail_after(LIMIT):
        async with Host(trace, [ServerSpec("charts", transport=transport)], policy=FAULTY,
                        elicit=kill_the_server_then_answer) as host:
            result = await host.call("render_error_trend", CHART_ARGS)
    assert result.is_error and _restarted(trace, result.text)


@pytest.mark.parametrize("enclosure", ["fail_after", "task group"])
async def test_a_restart_inside_an_enclosing_cancel_scope_does_not_cancel_the_run(enclosure: str) -> None:
    trace, results = Trace(), []

    async def crash_and_carry_on() -> None:
        async with Host(trace, [ServerSpec("faulty"), ServerSpec("logs")], policy=FAULTY) as host:
            results.append(await host.call("crash_now"))
            results.append(await host.call("sleep_for", {"seconds": 0}))

    with anyio.fail_after(LIMIT):
        if enclosure == "fail_after":
            with anyio.fail_after(LIMIT):
                await crash_and_carry_on()
        else:
            async with anyio.create_task_group() as group:
                group.start_soon(crash_and_carry_on)
    assert _restarted(trace, results[0].text) and results[1].text == "slept 0 s"


async def test_a_host_opened_in_one_task_is_listed_twice_and_closed_in_another() -> None:
    """What a notebook does: one cell opens the host, later cells list and call, another cell closes it."""
    host = Host(Trace(), [ServerSpec("logs"), ServerSpec("faulty")], policy=FAULTY)
    with anyio.fail_after(LIMIT):
        async with anyio.create_task_group() as cell:
            cell.start_soon(host.__aenter__)
        await host.pool.refresh()
        await host.pool.refresh()
        assert {"query_errors", "crash_now"} <= set(host.pool.names)
        async with anyio.create_task_group() as cell:
            cell.start_soon(host.call, "crash_now")
        async with anyio.create_task_group() as cell:
            cell.start_soon(host.aclose)
    assert not _server_processes("logs") and not _server_processes("faulty")


SILENT = ServerSpec("silent", command=sys.executable, args=("-c", "import sys; sys.stdin.read()"))
# Answers the handshake, then never the listing.
HANDSHAKE_ONLY = textwrap.dedent("""
    import json, sys
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "mute", "version": "0"}}
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
""")
MUTE = ServerSpec("silent", command=sys.executable, args=("-c", HANDSHAKE_ONLY))


# Says what it is doing on stderr, then never answers: what a server stuck loading an index looks like.
TALKS_THEN_HANGS = ServerSpec("stuck", command=sys.executable, args=("-c", textwrap.dedent("""
    import sys
    for n in range(20):
        print(f"loading shard {n} of 20", file=sys.stderr, flush=True)
    sys.stdin.read()
""")))


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_a_start_timeout_shows_the_end_of_what_the_server_wrote_to_stderr(era: str) -> None:
    with anyio.fail_after(LIMIT), pytest.raises(ServerStartError) as caught:
        async with Host(Trace(), [TALKS_THEN_HANGS], era=era, start_timeout=3):
            pass
    error = caught.value
    assert error.server == "stuck" and error.method is not None and error.returncode is None
    assert error.stderr.splitlines() == [f"loading shard {n} of 20" for n in range(8, 20)]
    assert "loading shard 19 of 20" in str(error) and "It wrote nothing" not in str(error)


@pytest.mark.parametrize("era, spec, stage", [("2026-07-28", SILENT, "server/discover"),
                                              ("2025-11-25", SILENT, "initialize"),
                                              ("2025-11-25", MUTE, "tools/list")])
async def test_a_server_that_never_answers_fails_the_start_within_the_timeout_naming_the_request(
    era: str, spec: ServerSpec, stage: str,
) -> None:
    with anyio.fail_after(LIMIT), pytest.raises(ServerStartError) as caught:
        async with Host(Trace(), [spec], era=era, start_timeout=3):
            pass
    assert caught.value.server == "silent" and caught.value.method == stage
    assert stage in str(caught.value)


def test_an_http_server_on_a_port_already_taken_is_not_mistaken_for_ours() -> None:
    with http_server("logs") as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        with pytest.raises(ServerStartError) as caught, http_server("charts", port=port):
            pass
    assert caught.value.server == "charts" and str(port) in str(caught.value)


PARENT = textwrap.dedent("""
    import anyio, psutil, sys
    from labkit.host import Host, ServerSpec
    from labkit.trace import Trace

    async def main():
        async with Host(Trace(), [ServerSpec("logs"), ServerSpec("charts", transport="http")]):
            pids = [p.pid for p in psutil.Process().children(recursive=True)]
            print(" ".join(map(str, pids)), flush=True)
            await anyio.sleep(3600)

    anyio.run(main)
""")


def test_a_killed_parent_leaves_no_server_on_either_transport() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=env)
    try:
        pids = [int(pid) for pid in parent.stdout.readline().split()]
        assert len(pids) >= 4  # a supervisor and a server for each transport
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        parent.stdout.close()
    _, alive = psutil.wait_procs([psutil.Process(pid) for pid in pids if psutil.pid_exists(pid)], timeout=10)
    assert not alive, f"still running after the parent was killed: {[p.cmdline() for p in alive]}"


def _started_servers(cli: subprocess.Popen) -> list[psutil.Process]:
    """The CLI's logs and charts servers once both are running (the supervisors are not counted)."""
    while cli.poll() is None:
        servers = [child for child in psutil.Process(cli.pid).children(recursive=True)
                   if any(arg.startswith("servers.") for arg in child.cmdline())
                   and "_supervisor.py" not in " ".join(child.cmdline())]
        if len(servers) == 2:
            return servers
        time.sleep(0.05)
    raise AssertionError(f"the CLI ended before starting its servers: {cli.communicate()}")


@pytest.mark.parametrize("signals", [[signal.SIGINT], [signal.SIGTERM], [signal.SIGINT, signal.SIGINT]],
                         ids=["ctrl-c", "sigterm", "ctrl-c twice"])
def test_a_signal_stops_the_cli_with_one_line_its_status_and_no_server_left(signals: list[int],
                                                                            tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    cli = subprocess.Popen([sys.executable, "-m", "labkit", "run", "canonical", "--out", str(tmp_path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        servers = _started_servers(cli)
        for number in signals:
            cli.send_signal(number)
        _, stderr = cli.communicate(timeout=LIMIT)
    finally:
        cli.kill()
        cli.wait()
    assert cli.returncode == 128 + signals[0]
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1 and "stopping the servers" in stderr
    _, alive = psutil.wait_procs(servers, timeout=10)
    assert not alive, f"still running after the CLI stopped: {[p.cmdline() for p in alive]}"


@pytest.mark.parametrize("delay", [0.3, 0.6, 1.0])  # before ~0.1 s Python itself is still starting
def test_a_ctrl_c_while_the_cli_is_still_importing_exits_130_quietly(delay: float, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    cli = subprocess.Popen([sys.executable, "-m", "labkit", "run", "canonical", "--out", str(tmp_path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        time.sleep(delay)
        children = psutil.Process(cli.pid).children(recursive=True)
        cli.send_signal(signal.SIGINT)
        _, stderr = cli.communicate(timeout=LIMIT)
    finally:
        cli.kill()
        cli.wait()
    assert cli.returncode == 130 and "Traceback" not in stderr and len(stderr.strip().splitlines()) <= 1
    _, alive = psutil.wait_procs(children, timeout=10)
    assert not alive, f"still running after the CLI stopped: {[p.cmdline() for p in alive]}"
