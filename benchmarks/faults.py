"""Figure 9: the fault cases of issue 18 replayed (`replays/fault_cases.py`): outcome, wall time and processes left."""

from __future__ import annotations

import inspect
import os
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio
import psutil

from labkit.host import ServerStartError
from labkit.trace import Kind
from replays.failure_cases import CASES as EXPLAINED_CASES
from replays.fault_cases import CASES, LIMIT, Replay
from replays.leftovers import SESSION_MARK, our_processes

__all__ = ["measure_faults", "outcome_of"]

_SETTLE_S = 10.0
"""How long a case's processes get to exit after it returns before they count as left (as in tests/conftest.py)."""
_SHOWN_CHARS = 220


def measure_faults(settle_s: float = _SETTLE_S) -> dict[str, Any]:
    """Replay every case in order (issue 18's, then issue 36's), each under its hang guard, counting the processes it
    left (then ending them)."""
    os.environ.setdefault(SESSION_MARK, uuid.uuid4().hex)
    cases = []
    for name, case in {**CASES, **EXPLAINED_CASES}.items():
        before = set(our_processes())
        with tempfile.TemporaryDirectory(prefix="labkit-fault-") as folder:
            started = time.monotonic()
            try:
                replay = _replayed(case(Path(folder)))
                outcome = outcome_of(replay)
            except Exception as error:  # noqa: BLE001 - the case's own machinery broke: reported in its row, the others still run
                replay, outcome = Replay(), f"CASE FAILED: {_first_line(error)}"
            seconds = time.monotonic() - started
        left = _left(before, replay.servers, settle_s)
        cases.append(
            {"case": name, "outcome": outcome, "seconds": round(seconds, 2), "processes_left": len(left), "left": left}
        )
    return {"cases": cases, "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()]}


def _replayed(started: Any) -> Replay:
    if not inspect.isawaitable(started):
        return started

    async def guarded() -> Replay:
        with anyio.fail_after(LIMIT):
            return await started

    return anyio.run(guarded)


def outcome_of(replay: Replay) -> str:
    """What a case ended in, read from its fields: the error, else the exit status, else the first failed result."""
    if isinstance(replay.error, ServerStartError):
        error = replay.error
        stderr = f"; stderr tail of {len(error.stderr.splitlines())} lines" if error.stderr else ""
        return f"ServerStartError({error.server}): {error.stage}{stderr}"
    if replay.error is not None:
        return _first_line(replay.error)
    if replay.returncode is not None:
        lines = replay.stderr.strip().splitlines()
        said = f", stderr: {lines[-1]}" if lines else ", stderr empty"
        if replay.stdout:  # a CLI run: whether it printed its table, and what it said on stderr
            return _shown(f"exit {replay.returncode}, {len(replay.stdout.splitlines())} lines on stdout{said}")
        return f"exit {replay.returncode}{said}"
    shown = [e.summary for e in replay.trace.of_kind(Kind.SERVER_STDERR)] + [
        e.summary for e in replay.trace.of_kind(Kind.HOST_NOTE) if isinstance(e.payload, dict) and "fix" in e.payload
    ]
    results = [r for r in replay.results if r.is_error] or replay.results
    restarts = len(replay.trace.of_kind(Kind.HOST_RESTART))
    if not results:
        return "no result"
    learner = f"; to the learner: {shown[0]}" if shown else ""
    if results[0].is_error:
        return _shown(f"isError ({restarts} restart(s)): {results[0].text.splitlines()[0]}{learner}")
    cuts = replay.trace.of_kind(Kind.HOST_TRUNCATE)  # a whole result held by the host, cut for the model
    first = cuts[0].summary if cuts else results[0].text.splitlines()[0]
    return _shown(f"ok ({restarts} restart(s)): {first}{learner}")


def _first_line(error: BaseException) -> str:
    return _shown(f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 1] + "…"


def _left(before: set[int], servers: list[int], settle_s: float) -> dict[int, str]:
    """The case's processes still alive once `settle_s` has passed; they are ended after being counted."""
    deadline = time.monotonic() + settle_s
    while True:
        alive = {pid: cmd for pid, cmd in our_processes().items() if pid not in before}
        for pid in servers:
            try:
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    alive.setdefault(pid, " ".join(psutil.Process(pid).cmdline()[-4:]))
            except psutil.Error:
                continue
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid in alive:
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            continue
    return alive
