"""A room on one machine: a real JupyterHub from classroom/jupyterhub_config.py, three learners at once."""

from __future__ import annotations

import asyncio
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from classroom.hub import Hub, missing

LEARNERS = 3
LESSON = "notebooks/03_nineteen_steps.ipynb"  # the canonical task, with its form answered by the scripted user


@pytest.fixture
def proxy() -> None:
    if missing():  # CI installs both (`make classroom-env` in .ci/run): there, a missing one is a failure
        pytest.fail(missing()) if os.environ.get("CI") else pytest.skip(missing())


async def test_three_learners_run_a_lesson_with_a_form_at_once_and_nothing_is_left(proxy: None, tmp_path: Path) -> None:
    async with Hub(tmp_path, LEARNERS) as hub:
        tokens = await asyncio.gather(*(hub.start_server(name) for name in hub.names))
        runs = await asyncio.gather(
            *(hub.run_lesson(name, token, LESSON) for name, token in zip(hub.names, tokens, strict=True))
        )
        for run in runs:
            assert run.delivered, (run.learner, run.errors, hub.log_tail())
        homes = {name: tmp_path / "home" / name for name in hub.names}
        # each learner ran in their own copy of the course, with business systems of their own
        for name, home in homes.items():
            assert (home / "mcp-lab" / LESSON).is_file()
            assert any((home / ".mcp-lab-data").iterdir()), f"{name}'s data folder is empty"
    assert hub.processes() == [], "processes left running after the hub stopped"


@pytest.mark.parametrize(
    ("server", "cause"),
    [("time.sleep(3600)", "The server is not answering"), ("sys.exit(3)", "ended (exit status 3) before it answered")],
)
async def test_a_learners_server_that_fails_to_start_is_named_with_its_cause_and_its_own_log(
    proxy: None, tmp_path: Path, server: str, cause: str
) -> None:
    """Not the hub's "took too long" after a fixed time: the spawner's deadline over the server's own processes
    (a tenth of the quiet machine's limit, by the one time setting) says whether it ended or does not answer, and
    shows the server's own log, not the hub's."""
    said = "a learner's server, pid {os.getpid()}"
    command = [sys.executable, "-c", f"import os, sys, time; print(f{said!r}, flush=True); {server}"]
    async with Hub(
        tmp_path, 1, hub_env={"LABKIT_TIME_SCALE": "0.1"}, extra_config=[f"c.Spawner.cmd = {command!r}"]
    ) as hub:
        with pytest.raises(RuntimeError) as failed:
            await hub.start_server(hub.names[0])
    assert cause in str(failed.value) and "a learner's server, pid" in str(failed.value), str(failed.value)
    assert hub.processes() == [], "processes left running after the hub stopped"


async def test_a_learner_beyond_the_kernel_cap_loses_the_least_recently_used_idle_kernel_only() -> None:
    from classroom.kernels import RoomKernelManager

    manager = RoomKernelManager(max_kernels=2)
    try:
        oldest, used_later = [await manager.start_kernel(kernel_name="python3") for _ in range(2)]
        newest = await manager.start_kernel(kernel_name="python3")
        assert set(manager.list_kernel_ids()) == {used_later, newest}
        assert oldest not in manager.list_kernel_ids()
    finally:
        await manager.shutdown_all()


# Run as learner B: what of learner A's can B reach? A's data folder, A's warm Pythons (abstract sockets, which
# carry no file permissions: each warm Python must refuse a requester of another user itself), and A's lab HTTP
# servers (every port A listens on, from /proc/net/tcp, which any user reads, asked to start an MCP session).
_PROBE = """
import http.client, json, os, sys
from labkit._warm._client import fork
home, uid = sys.argv[1], int(sys.argv[2])
outcome = {}
try:
    os.listdir(os.path.join(home, ".mcp-lab-data"))
    outcome["data"] = "read"
except PermissionError:
    outcome["data"] = "denied"
def owner(name):
    try:
        status = open(f"/proc/{name.split('-')[2]}/status").read()
    except (OSError, IndexError):
        return None
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("Uid:")))
names = {line.split()[-1] for line in open("/proc/net/unix") if "@labkit-warm-" in line}
theirs = sorted(name for name in names if owner(name) == uid)
outcome["warm_pythons"] = len(theirs)
outcome["forked_for_me"] = sum(fork(name, {"module": "runpy", "args": [], "env": {}, "cwd": "/"}, [0, 1, 2])
                               is not None for name in theirs)
rows = [line.split() for line in open("/proc/net/tcp").read().splitlines()[1:]]
ports = sorted({int(row[1].split(":")[1], 16) for row in rows if row[3] == "0A" and int(row[7]) == uid})
initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "learner-b", "version": "0"}}})
statuses = {}
for port in ports:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("POST", "/mcp", initialize, {"Content-Type": "application/json",
                                                       "Accept": "application/json, text/event-stream"})
        statuses[port] = connection.getresponse().status
    except (OSError, http.client.HTTPException) as error:  # not HTTP at all: a kernel's ZeroMQ ports
        statuses[port] = type(error).__name__
outcome["http_statuses"] = statuses
print(json.dumps(outcome))
"""
# Run as learner A: a host with a lab HTTP server, left running while B probes.
_HOST_A = """
import sys
from labkit.host import http_server
with http_server("logs") as url:
    print(url.split("?")[0], flush=True)
    sys.stdin.read()
"""
LEARNER_PYTHON_ENV = "LABKIT_LEARNER_PYTHON"
"""A Python with the lab installed that every OS user can run (`make learners-env` makes one; CI sets this)."""


@contextmanager
def _os_learners(root: Path, count: int) -> Iterator[list[str]]:
    names = [f"lab{secrets.token_hex(3)}" for _ in range(count)]
    try:
        for name in names:
            subprocess.run(
                ["useradd", "--create-home", "--home-dir", str(root / "home" / name), "--shell", "/bin/bash", name],
                check=True,
                capture_output=True,
            )
        yield names
    finally:
        for name in names:
            subprocess.run(["userdel", name], capture_output=True)


def _learners_python(user: str) -> str:
    """A Python with the lab that `user` can run, or the test is skipped saying why none is (failed, in CI)."""
    tried = []
    for python in dict.fromkeys(filter(None, [os.environ.get(LEARNER_PYTHON_ENV), sys.executable])):
        try:
            ran = subprocess.run(
                [python, "-c", "import labkit, jupyterhub"], user=user, capture_output=True, text=True, cwd="/"
            )
        except PermissionError as error:
            ran = subprocess.CompletedProcess([], 1, "", str(error))
        if ran.returncode == 0:
            return python
        tried.append(f"{python}: {ran.stderr.strip().splitlines()[-1] if ran.stderr.strip() else ran.returncode}")
    why = (
        f"no Python with the lab that another OS user can run ({'; '.join(tried)}): the lab's venv points at a "
        f"Python under a folder only its owner may enter. Make one with `make learners-env` (as root) and set "
        f"{LEARNER_PYTHON_ENV} to its bin/python"
    )
    pytest.fail(why) if os.environ.get("CI") else pytest.skip(why)
    raise AssertionError  # not reached: fail and skip raise


async def test_a_learner_cannot_read_another_learners_data_or_use_their_warm_python_or_servers(proxy: None) -> None:
    if os.getuid() != 0 or not shutil.which("useradd"):
        pytest.skip("needs root and useradd, to make two OS users as a hub machine has")
    # Not in pytest's own folder, which only root may enter: the learners' homes are below this one.
    root = Path(tempfile.mkdtemp(prefix="labkit-room-"))
    try:
        root.chmod(0o755)
        (root / "home").mkdir(mode=0o755)
        with _os_learners(root, 2) as (alice, bob):
            python = _learners_python(bob)
            async with Hub(root, 2, os_users=[alice, bob], python=python) as hub:
                token = await hub.start_server(alice)
                run = await hub.run_lesson(alice, token, LESSON, leave_open=True)  # her kernel and warm Pythons stay
                assert run.delivered, (run.errors, hub.log_tail())
                home = pwd.getpwnam(alice).pw_dir
                host_a = subprocess.Popen(
                    [python, "-c", _HOST_A],
                    user=alice,
                    cwd=home,
                    env={"HOME": home, "PATH": os.environ["PATH"], "LABKIT_DATA_DIR": f"{home}/.mcp-lab-data"},
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                try:
                    assert host_a.stdout is not None
                    alices_server = host_a.stdout.readline().strip()
                    assert alices_server.startswith("http://127.0.0.1:"), alices_server
                    probe = subprocess.run(
                        [python, "-c", _PROBE, home, str(pwd.getpwnam(alice).pw_uid)],
                        user=bob,
                        cwd="/",
                        capture_output=True,
                        text=True,
                        timeout=120,
                    )
                finally:
                    host_a.communicate("", timeout=60)
                assert probe.returncode == 0, probe.stderr
                outcome = json.loads(probe.stdout)
                assert outcome["data"] == "denied"
                assert outcome["warm_pythons"] > 0, "Alice's lesson left no warm Python to try"
                assert outcome["forked_for_me"] == 0
                statuses = {int(port): status for port, status in outcome["http_statuses"].items()}
                assert statuses[int(alices_server.rsplit(":", 1)[1].split("/")[0])] == 403, statuses
                assert 200 not in statuses.values(), statuses  # no port of hers started a session for Bob
            assert hub.processes() == []
    finally:
        shutil.rmtree(root, ignore_errors=True)
