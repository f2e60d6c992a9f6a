"""The fault suite: each fault replayed against real server processes, under a hard limit, with no process left.

The cases themselves are in `replays/fault_cases.py` (shared with `python -m benchmarks --only faults`).
Every test here runs under `anyio.fail_after` (a hang guard, not a timing claim); the `_no_orphans`
fixture in conftest.py fails any test that leaves a server running.
"""

from __future__ import annotations

import signal
import socket
from pathlib import Path

import anyio
import psutil
import pytest

from labkit.host import ServerStartError, free_port
from labkit.trace import Trace
from replays import fault_cases as cases
from replays.fault_cases import LIMIT, MUTE, SILENT, TALKS_THEN_HANGS, server_processes

TRANSPORTS = ["stdio", "http"]


def _restarted(trace: Trace, text: str) -> bool:
    return len(trace.of_kind("host.restart")) == 1 and "the host restarted it" in text


def _ran(replay: cases.Replay) -> list:
    assert replay.error is None, f"the case ended in {replay.error!r}"
    return replay.results


def _none_alive(pids: list[int]) -> None:
    processes = []
    for pid in pids:
        try:
            processes.append(psutil.Process(pid))
        except psutil.NoSuchProcess:  # already gone
            continue
    _, alive = psutil.wait_procs(processes, timeout=10)
    assert not alive, f"still running: {[cases.command_line(p) for p in alive]}"


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_crash_mid_call_is_noticed_restarted_once_and_the_next_call_works(transport: str) -> None:
    with anyio.fail_after(LIMIT):
        replay = await cases.crash_mid_call(transport)
    crashed, after = _ran(replay)
    assert crashed.is_error and _restarted(replay.trace, crashed.text)
    assert after.text == "slept 0 s" and not after.is_error


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_a_server_that_dies_between_the_two_input_rounds_is_restarted_and_the_model_told(transport: str) -> None:
    with anyio.fail_after(LIMIT):
        replay = await cases.dies_between_rounds(transport)
    [result] = _ran(replay)
    assert result.is_error and _restarted(replay.trace, result.text)


@pytest.mark.parametrize("enclosure", ["fail_after", "task group"])
async def test_a_restart_inside_an_enclosing_cancel_scope_does_not_cancel_the_run(enclosure: str) -> None:
    with anyio.fail_after(LIMIT):
        replay = await cases.restart_inside(enclosure)
    crashed, after = _ran(replay)
    assert _restarted(replay.trace, crashed.text) and after.text == "slept 0 s"


async def test_a_host_opened_in_one_task_is_listed_twice_and_closed_in_another() -> None:
    """What a notebook does: one cell opens the host, later cells list and call, another cell closes it."""
    with anyio.fail_after(LIMIT):
        replay = await cases.used_from_other_tasks()
    assert _restarted(replay.trace, _ran(replay)[0].text) and {"query_errors", "crash_now"} <= set(replay.listed)
    assert not server_processes("logs") and not server_processes("faulty")


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_a_start_timeout_shows_the_end_of_what_the_server_wrote_to_stderr(era: str) -> None:
    with anyio.fail_after(LIMIT):
        error = (await cases.silent_start(TALKS_THEN_HANGS, era)).error
    assert isinstance(error, ServerStartError)
    assert error.server == "stuck" and error.method is not None and error.returncode is None
    assert error.stderr.splitlines() == [f"loading shard {n} of 20" for n in range(8, 20)]
    assert "loading shard 19 of 20" in str(error) and "It wrote nothing" not in str(error)


@pytest.mark.parametrize(
    "era, spec, stage",
    [
        ("2026-07-28", SILENT, "server/discover"),
        ("2025-11-25", SILENT, "initialize"),
        ("2025-11-25", MUTE, "tools/list"),
    ],
)
async def test_a_server_that_never_answers_fails_the_start_within_the_timeout_naming_the_request(
    era: str,
    spec,
    stage: str,
) -> None:
    with anyio.fail_after(LIMIT):
        error = (await cases.silent_start(spec, era)).error
    assert isinstance(error, ServerStartError)
    assert error.server == "silent" and error.method == stage and stage in str(error)


async def test_bytes_that_are_not_utf8_are_a_visible_transport_error_and_the_start_fails_in_time() -> None:
    with anyio.fail_after(LIMIT):
        replay = await cases.silent_start(cases.NOT_UTF8, "2025-11-25")
    assert isinstance(replay.error, ServerStartError) and replay.error.method == "initialize"
    assert replay.trace.of_kind("transport.error")


def test_a_free_port_is_picked_below_the_ephemeral_range_so_no_port_0_socket_takes_it_first() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = {free_port() for _ in range(20)}
    assert all(1024 <= port < low for port in ports) and len(ports) > 1
    with socket.socket() as kernel_like:  # what a Jupyter kernel or an outgoing connection does
        kernel_like.bind(("127.0.0.1", 0))
        assert kernel_like.getsockname()[1] >= low


def test_an_http_server_on_a_port_already_taken_is_not_mistaken_for_ours() -> None:
    error = cases.port_taken().error
    assert (
        isinstance(error, ServerStartError)
        and error.server == "charts"
        and "port" in str(error)
        and "already used" in str(error)
    )


def test_a_killed_parent_leaves_no_server_on_either_transport() -> None:
    replay = cases.parent_killed()
    assert len(replay.servers) >= 4  # a supervisor and a server for each transport
    _none_alive(replay.servers)


@pytest.mark.parametrize(
    "signals",
    [[signal.SIGINT], [signal.SIGTERM], [signal.SIGINT, signal.SIGINT]],
    ids=["ctrl-c", "sigterm", "ctrl-c twice"],
)
def test_a_signal_stops_the_cli_with_one_line_its_status_and_no_server_left(signals: list[int], tmp_path: Path) -> None:
    replay = cases.cli_signalled(signals, tmp_path)
    assert replay.returncode == 128 + signals[0]
    assert "Traceback" not in replay.stderr and len(replay.stderr.strip().splitlines()) == 1
    assert "stopping the servers" in replay.stderr
    _none_alive(replay.servers)


@pytest.mark.parametrize("delay", [0.0, 0.3, 0.6])
def test_a_ctrl_c_while_the_cli_is_still_importing_exits_130_quietly(delay: float, tmp_path: Path) -> None:
    replay = cases.cli_interrupted_while_importing(delay, tmp_path)
    assert replay.returncode == 130 and "Traceback" not in replay.stderr
    assert len(replay.stderr.strip().splitlines()) <= 1
    _none_alive(replay.servers)
