"""A server's end is one value, and the error it becomes follows from that value alone (no process started)."""

from __future__ import annotations

import pytest

from labkit.errors import LabError
from labkit.processes import ServerEnd, ServerEnded, ServerMessageTooLarge, ServerStartError
from labkit.processes._process import LimitHit


def _end(**fields: object) -> ServerEnd:
    given: dict = {"server": "logs", "command": "python -m servers.logs", "started": True, "returncode": 1}
    return ServerEnd(**{**given, "stderr": "Traceback ...\nKeyError: 'x'", **fields})


def test_a_server_that_had_answered_ended_mid_session_and_says_its_status_and_stderr() -> None:
    error = _end(lines=3).as_error("before the session ended")
    assert isinstance(error, ServerEnded) and isinstance(error, LabError) and not isinstance(error, ServerStartError)
    assert error.end.why == "exited" and error.returncode == 1 and "KeyError: 'x'" in str(error)


@pytest.mark.parametrize(
    "fields, why",
    [
        ({"lines": 0}, "exited"),
        ({"started": False, "returncode": None, "error": "FileNotFoundError: No such file"}, "not started"),
        ({"returncode": None}, "running"),
    ],
)
def test_a_server_that_never_answered_did_not_start(fields: dict, why: str) -> None:
    end = _end(**fields)
    error = end.as_error("before the session ended")
    assert end.why == why and isinstance(error, ServerStartError) and error.stage == "before the session ended"


def test_a_limit_hit_is_the_cause_whatever_else_the_end_says() -> None:
    end = _end(lines=5, limit_hit=LimitHit(size=9_000_000, whole=False, limit=4_259_840))
    error = end.as_error("before the session ended")
    assert end.why == "too large" and isinstance(error, ServerMessageTooLarge)
    assert (error.size, error.whole, error.limit) == (9_000_000, False, 4_259_840)


def test_no_note_from_the_supervisor_is_an_unknown_end() -> None:
    assert _end(started=False, returncode=None).why == "unknown"
