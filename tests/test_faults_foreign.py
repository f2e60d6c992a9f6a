"""Faults of a stdio server nobody here wrote (`replays/foreign_server.py`): a clear error each, bounded, no orphan.

The cases are in `replays/fault_cases.py`. Every test runs under `anyio.fail_after` (a hang guard, not a
timing claim); the `_no_orphans` fixture in conftest.py fails any test that leaves a server running.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from labkit.host import MAX_RESULT_BYTES_ENV, Host, ServerMessageTooLarge, ServerStartError, max_message_bytes
from labkit.processes._message_limit import DEFAULT_MAX_RESULT_BYTES
from labkit.trace import Trace
from replays.fault_cases import LIMIT, foreign, huge_result, restart_stuck


async def test_a_restart_that_times_out_shows_the_end_of_what_the_server_wrote_to_stderr(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        error = (await restart_stuck(tmp_path / "started-once")).error
    assert isinstance(error, ServerStartError)
    assert error.server == "foreign" and error.method is not None and error.returncode is None
    assert error.stderr.splitlines() == [f"loading shard {n} of 20" for n in range(8, 20)]
    assert "loading shard 19 of 20" in str(error) and "It wrote nothing" not in str(error)


async def test_a_64_mib_result_ends_the_connection_with_an_error_naming_the_sizes_and_the_next_call_works() -> None:
    with anyio.fail_after(LIMIT):
        replay = await huge_result("stdio")
    assert replay.error is None, replay.error
    huge, after = replay.results
    [cut] = [e for e in replay.trace.of_kind("host.error") if e.payload and "bytes" in e.payload]
    limit = max_message_bytes()
    assert cut.meta["server"] == "foreign" and cut.payload["whole"] and cut.payload["limit"] == limit
    assert cut.payload["bytes"] > 64 * 1024 * 1024  # the text, and again as structured content
    assert huge.is_error and f"{cut.payload['bytes']:,} bytes" in huge.text and f"{limit:,} bytes" in huge.text
    assert "foreign server" in huge.text and MAX_RESULT_BYTES_ENV in huge.text
    assert len(replay.trace.of_kind("host.restart")) == 1 and not after.is_error and "x" * 10_000 in after.text


async def test_a_handshake_over_the_limit_fails_the_start_naming_the_server_and_the_sizes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(MAX_RESULT_BYTES_ENV, "1")  # the host's limit becomes the envelope alone: 64 KiB and a byte
    with anyio.fail_after(LIMIT), pytest.raises(ServerMessageTooLarge) as caught:
        async with Host(Trace(), [foreign(FOREIGN_INSTRUCTIONS_KB="100")]):
            pass
    error = caught.value
    assert error.server == "foreign" and error.whole and error.size > 100 * 1024 and error.limit == 64 * 1024 + 1
    assert f"{error.size:,} bytes" in str(error) and MAX_RESULT_BYTES_ENV in str(error)


def test_the_hosts_limit_lets_a_result_at_the_lab_servers_cap_through_and_refuses_a_bad_setting() -> None:
    assert max_message_bytes({}) > DEFAULT_MAX_RESULT_BYTES
    assert max_message_bytes({MAX_RESULT_BYTES_ENV: "1000"}) > 1000
    with pytest.raises(ValueError, match=f"{MAX_RESULT_BYTES_ENV} must be a whole number of bytes above 0, not '4M'"):
        max_message_bytes({MAX_RESULT_BYTES_ENV: "4M"})
