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


# Run as learner B: what of learner A's can B reach? A's data folder, and A's warm Pythons (abstract sockets, which
# carry no file permissions: each warm Python must refuse a requester of another user itself).
_PROBE = """
import json, os, sys
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
print(json.dumps(outcome))
"""


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


async def test_a_learner_cannot_read_another_learners_data_or_use_their_warm_python(
    proxy: None, tmp_path: Path
) -> None:
    if os.getuid() != 0 or not shutil.which("useradd"):
        pytest.skip("needs root and useradd, to make two OS users as a hub machine has")
    tmp_path.chmod(0o755)  # the homes below are the learners'; the folder above them must let them in
    (tmp_path / "home").mkdir(mode=0o755)
    with _os_learners(tmp_path, 2) as (alice, bob):
        python = sys.executable
        try:
            readable = subprocess.run([python, "-c", "import labkit"], user=bob, capture_output=True, text=True)
        except PermissionError as error:
            readable = subprocess.CompletedProcess([], 1, "", str(error))
        if readable.returncode:  # a hub machine installs the lab where every learner can run it (/opt, /srv)
            pytest.skip(f"the lab's Python cannot be run by another OS user on this machine: {readable.stderr[-200:]}")
        async with Hub(tmp_path, 2, os_users=[alice, bob]) as hub:
            token = await hub.start_server(alice)
            run = await hub.run_lesson(alice, token, LESSON, leave_open=True)  # her kernel and warm Pythons stay
            assert run.delivered, (run.errors, hub.log_tail())
            home = pwd.getpwnam(alice).pw_dir
            probe = subprocess.run(
                [python, "-c", _PROBE, home, str(pwd.getpwnam(alice).pw_uid)],
                user=bob,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert probe.returncode == 0, probe.stderr
            outcome = json.loads(probe.stdout)
            assert outcome["data"] == "denied"
            assert outcome["warm_pythons"] > 0, "Alice's lesson left no warm Python to try"
            assert outcome["forked_for_me"] == 0
        assert hub.processes() == []
