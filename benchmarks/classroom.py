"""A room on this machine: N learners running a lesson with a form at once through a real JupyterHub, and one
learner's memory as lessons are left open (`--only classroom`)."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
from pathlib import Path
from typing import Any

from classroom.hub import Hub, missing
from classroom.memory import tree_memory

__all__ = ["measure_classroom"]

LESSON = "notebooks/03_nineteen_steps.ipynb"
_MIB = 2**20


def measure_classroom(learners: int = 8) -> dict[str, Any]:
    """Lesson time alone and for `learners` at once (p50, p95), peak PSS per learner, PSS with 1, 3, 9 lessons open."""
    if missing():
        return {"skipped": missing()}
    return asyncio.run(_measure(learners))


async def _measure(learners: int) -> dict[str, Any]:
    results: dict[str, Any] = {"learners": learners, "lesson": LESSON}
    with tempfile.TemporaryDirectory() as alone_root:
        async with Hub(Path(alone_root), 1) as hub:
            token = await hub.start_server(hub.names[0])
            alone = await hub.run_lesson(hub.names[0], token, LESSON, sampled=hub.server_pid(hub.names[0]))
            results["alone_s"] = round(alone.seconds, 1)
            results["open_lessons_mib"], group = await _left_open(hub, token)
        results["left_running_alone"] = len(hub.processes())
        if group:
            group.rmdir()
    with tempfile.TemporaryDirectory() as room_root:
        async with Hub(Path(room_root), learners) as hub:
            tokens = await asyncio.gather(*(hub.start_server(name) for name in hub.names))
            runs = await asyncio.gather(
                *(
                    hub.run_lesson(name, token, LESSON, sampled=hub.server_pid(name))
                    for name, token in zip(hub.names, tokens, strict=True)
                )
            )
        results["left_running_room"] = len(hub.processes())
    times = sorted(run.seconds for run in runs)
    results.update(
        {
            "delivered": sum(run.delivered for run in runs),
            "errors": [error for run in runs for error in run.errors][:5],
            "p50_s": round(statistics.median(times), 1),
            "p95_s": round(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))], 1),
            "peak_pss_per_learner_mib": round(max(run.peak_pss for run in runs) / _MIB),
            "alone_peak_pss_mib": round(alone.peak_pss / _MIB),
        }
    )
    results["p50_over_alone"] = round(results["p50_s"] / results["alone_s"], 2)
    return results


_CGROUP = Path("/sys/fs/cgroup/memory")  # cgroup v1's memory controller, as on this machine; v2 is not handled
_LIMIT = 2**30


def _confine(pid: int) -> Path | None:
    """`pid` (and what it starts from now on) in a memory cgroup of 1 GiB, as Binder or a hub's spawner gives."""
    group = _CGROUP / f"labkit-learner-{pid}"
    try:
        group.mkdir()
        (group / "memory.limit_in_bytes").write_text(str(_LIMIT))
        (group / "cgroup.procs").write_text(str(pid))
    except OSError:
        return None
    return group


def _oom_kills(group: Path) -> int:
    for line in (group / "memory.oom_control").read_text().splitlines():
        if line.startswith("oom_kill "):
            return int(line.split()[1])
    return 0


async def _left_open(hub: Hub, token: str) -> tuple[dict[str, int | str], Path | None]:
    """The learner's whole process tree (PSS) after 1, 3 and 9 lessons run in order and left open, with the peak,
    inside a 1 GiB memory cgroup where the machine allows one (the OOM kills it saw)."""
    name = hub.names[0]
    server = hub.server_pid(name)
    group = _confine(server)
    lessons = sorted(
        str(path.relative_to(Path(__file__).resolve().parents[1]))
        for path in (Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb")
    )
    figures: dict[str, int | str] = {}
    peak = 0
    for count, lesson in enumerate(lessons, 1):
        run = await hub.run_lesson(name, token, lesson, sampled=server, leave_open=True)
        peak = max(peak, run.peak_pss)
        if count in (1, 3, len(lessons)):
            figures[f"{count}_open"] = round(tree_memory(server).pss / _MIB)
    figures["peak"] = round(peak / _MIB)
    if group is None:
        figures["oom_kills_under_1_gib"] = "not measured: no writable cgroup v1 memory controller"
    else:
        figures["oom_kills_under_1_gib"] = _oom_kills(group)
        figures["cgroup_max_usage"] = round(int((group / "memory.max_usage_in_bytes").read_text()) / _MIB)
    return figures, group
