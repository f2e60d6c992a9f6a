"""Faults of a stdio server nobody here wrote (`tests/foreign_server.py`): each a clear error, bounded, no process left.

Every test runs under `anyio.fail_after` (a hang guard, not a timing claim); the `_no_orphans` fixture
in conftest.py fails any test that leaves a server running.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest

from labkit.host import GatePolicy, Host, ServerSpec, ServerStartError
from labkit.trace import Trace

LIMIT = 90
FOREIGN_SERVER = str(Path(__file__).with_name("foreign_server.py"))
ANY_CALL = GatePolicy(approve_all=True)


def foreign(**env: str) -> ServerSpec:
    return ServerSpec("foreign", command=sys.executable, args=(FOREIGN_SERVER,), env=env)


async def test_a_restart_that_times_out_shows_the_end_of_what_the_server_wrote_to_stderr(tmp_path: Path) -> None:
    spec = foreign(FOREIGN_STUCK_MARKER=str(tmp_path / "started-once"))
    with anyio.fail_after(LIMIT), pytest.raises(ServerStartError) as caught:
        async with Host(Trace(), [spec], policy=ANY_CALL, start_timeout=3) as host:
            await host.call("crash")
    error = caught.value
    assert error.server == "foreign" and error.method is not None and error.returncode is None
    assert error.stderr.splitlines() == [f"loading shard {n} of 20" for n in range(8, 20)]
    assert "loading shard 19 of 20" in str(error) and "It wrote nothing" not in str(error)
