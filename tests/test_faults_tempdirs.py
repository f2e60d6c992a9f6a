"""Temp folders never outlive their owner: closed, exited with a Host open, or killed (swept at the next start).

Each case runs in a temp folder of its own (the machine's /tmp is shared) with real processes and a real
lab server; `anyio.fail_after` and subprocess timeouts are hang guards, not timing claims.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import anyio
import psutil
import pytest

from labkit.host import Host, LabTempDir, ServerSpec
from labkit.processes._tempdirs import sweep_dead_owners
from labkit.trace import Trace

LIMIT = 90
REPO = Path(__file__).resolve().parents[1]

# A kernel with a Host still open when it is shut down: the loop is left as it is, the interpreter exits.
OPEN_HOST = textwrap.dedent("""
    import asyncio, os, sys
    import psutil
    from labkit.host import Host, ServerSpec
    from labkit.security import host_state_dir
    from labkit.trace import Trace

    host_state_dir()
    loop = asyncio.new_event_loop()
    host = Host(Trace(), [ServerSpec("logs"), ServerSpec("charts", transport="http")])
    loop.run_until_complete(host.__aenter__())
    pids = [p.pid for p in psutil.Process().children(recursive=True)]
    print(len(os.listdir(sys.argv[1])), " ".join(map(str, pids)), flush=True)
    if sys.argv[2] == "sleep":
        loop.run_until_complete(asyncio.sleep(3600))
""")


def _open_a_host(folder: Path, then: str) -> tuple[subprocess.Popen, int, list[int]]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(folder)}
    process = subprocess.Popen(
        [sys.executable, "-c", OPEN_HOST, str(folder), then], stdout=subprocess.PIPE, text=True, env=env
    )
    count, *pids = process.stdout.readline().split()
    return process, int(count), [int(pid) for pid in pids]


def _no_server_left(pids: list[int]) -> None:
    _, alive = psutil.wait_procs([psutil.Process(pid) for pid in pids if psutil.pid_exists(pid)], timeout=10)
    assert not alive, f"still running: {[p.cmdline() for p in alive]}"


def _kinds(folder: Path) -> list[str]:
    return sorted(p.name.split("-p")[0] for p in folder.iterdir())


async def test_the_hosts_temp_folders_are_removed_when_it_closes(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with anyio.fail_after(LIMIT):
        async with Host(Trace(), [ServerSpec("logs"), ServerSpec("charts", transport="http")]):
            during = _kinds(tmp_path)
    assert during == ["labkit-events", "labkit-start", "labkit-start"] and not list(tmp_path.iterdir())


def test_a_process_that_exits_with_a_host_open_leaves_no_temp_folder(tmp_path: Path) -> None:
    process, during, pids = _open_a_host(tmp_path, "exit")
    try:
        process.wait(timeout=LIMIT)
    finally:
        process.kill()
        process.stdout.close()
    assert during == 4  # host state, events, and a start folder per server
    assert process.returncode == 0 and not list(tmp_path.iterdir())
    _no_server_left(pids)


async def test_the_folders_of_a_killed_process_are_swept_by_the_next_host_start(tmp_path: Path, monkeypatch) -> None:
    process, during, pids = _open_a_host(tmp_path, "sleep")
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stdout.close()
    _no_server_left(pids)
    assert during == 4 and len(list(tmp_path.iterdir())) == 4  # nothing could run in a killed process
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with anyio.fail_after(LIMIT):
        async with Host(Trace(), [ServerSpec("logs")]):
            owners = {p.name.split("-p")[1].split("s")[0] for p in tmp_path.iterdir()}
    assert owners == {str(os.getpid())} and not list(tmp_path.iterdir())


def test_the_sweep_keeps_live_owners_and_other_users_folders_and_takes_a_reused_pids(tmp_path: Path) -> None:
    mine = LabTempDir("events")
    ours = mine.path.name.split("-p")[1].split("-")[0]  # "<pid>s<start time>"
    pid = ours.split("s")[0]
    (tmp_path / mine.path.name).mkdir()  # the same owner: alive
    (tmp_path / f"labkit-start-p{pid}s1-reused00").mkdir()  # our pid, another start time: its owner is dead
    (tmp_path / "labkit-events-abc123").mkdir()  # no owner in the name (an older lab): not ours to judge
    (tmp_path / "notes").mkdir()
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / f"labkit-events-p{dead.stdout.strip()}s5-deadbeef").mkdir()
    others = tmp_path / f"labkit-events-p{dead.stdout.strip()}s5-otheruser"
    others.mkdir()
    if os.getuid() == 0:
        os.chown(others, 65534, 65534)
    removed = sweep_dead_owners(tmp_path)
    mine.remove()
    expected = {f"labkit-start-p{pid}s1-reused00", f"labkit-events-p{dead.stdout.strip()}s5-deadbeef"}
    if os.getuid() != 0:
        expected.add(others.name)  # only root can give a folder to another user
    assert {p.name for p in removed} == expected
    assert not mine.path.exists() and {p.name for p in tmp_path.iterdir()} >= {
        mine.path.name,
        "labkit-events-abc123",
        "notes",
    }


def test_a_kind_that_is_not_a_plain_word_is_refused_naming_the_form() -> None:
    with pytest.raises(ValueError, match="lowercase words"):
        LabTempDir("../events")
