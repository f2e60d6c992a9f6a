"""A room on one machine: a real JupyterHub from classroom/jupyterhub_config.py, three learners at once."""

from __future__ import annotations

import asyncio
import os
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
