"""`python -m benchmarks [--quick] [--setup]`: run the lab's benchmarks, print a table, write results JSON.

`--only faults` replays the fault cases of issue 18 and `--only classroom` runs a room of learners through a real
JupyterHub (a few minutes each; neither is part of a default run).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from .environment import REPO_ROOT, lab_environment, machine_facts
from .report import rows_for, table, write_json

__all__ = ["FULL", "QUICK", "Plan", "main"]

Runner = Callable[["Plan", "float | None"], dict[str, Any]]
"""A section: the plan and the seconds left of the run's budget (None: no budget) in, its results out."""
SECTIONS = ("tracing", "model", "canonical", "processes", "workshop", "course", "setup", "faults", "classroom")
_ON_REQUEST = ("setup", "faults", "classroom")
"""Sections a default run leaves out: `--setup` adds the first, `--only` names either."""


@dataclass(frozen=True)
class Plan:
    """How many samples each figure takes; `--quick` trades precision for time."""

    tracing_samples: int
    tracing_warmup: int
    model_samples: int
    canonical_runs: int
    process_runs: int
    scales: tuple[int, ...]
    course: bool
    budget_s: float
    """The course run gets what is left of this; notebooks beyond it are listed, not run."""


FULL = Plan(
    tracing_samples=200,
    tracing_warmup=20,
    model_samples=200,
    canonical_runs=4,
    process_runs=5,
    scales=(1, 10, 50),
    course=True,
    budget_s=270,
)
QUICK = Plan(
    tracing_samples=80,
    tracing_warmup=10,
    model_samples=100,
    canonical_runs=2,
    process_runs=2,
    scales=(1, 10),
    course=False,
    budget_s=60,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer samples, no course run (about a minute)")
    parser.add_argument("--setup", action="store_true", help="also time a fresh clone to first trace (slow)")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, help="run just these sections")
    parser.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="time budget of the whole run; the course gets what is left (0: no budget, "
        f"every notebook runs; default {FULL.budget_s:.0f})",
    )
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "benchmarks" / "results" / "latest.json")
    options = parser.parse_args(argv)
    plan = QUICK if options.quick else FULL
    if options.budget is not None:
        plan = replace(plan, budget_s=options.budget)
    chosen = options.only or [s for s in SECTIONS if s not in _ON_REQUEST or (s == "setup" and options.setup)]

    results: dict[str, Any] = {
        "started": datetime.now(UTC).isoformat(timespec="seconds"),
        "mode": "quick" if options.quick else "full",
        "plan": plan.__dict__,
        "machine": machine_facts(),
    }
    began = time.monotonic()
    with lab_environment():
        for number, section in enumerate(chosen, 1):
            print(f"[{number}/{len(chosen)}] {section} ...", file=sys.stderr, flush=True)
            left = plan.budget_s - (time.monotonic() - began) if plan.budget_s else None
            results[section] = _run_section(_RUNNERS[section], plan, left)
    results["seconds"] = round(time.monotonic() - began, 1)
    results["machine"]["load_average_at_end"] = machine_facts()["load_average_1_5_15"]

    facts = results["machine"]
    print(
        f"benchmarks ({results['mode']}, {results['seconds']:.0f} s) on {facts['cpus']} CPUs, "
        f"load {facts['load_average_1_5_15'][0] if facts['load_average_1_5_15'] else '?'} at start; "
        f"mcp {facts['versions']['mcp']}, Python {facts['python']}"
    )
    print(table(rows_for(results)))
    print(f"\nresults: {write_json(results, options.out)}")
    return 1 if any("error" in results[s] for s in chosen) else 0


def _run_section(runner: Runner, plan: Plan, left: float | None) -> dict[str, Any]:
    """Run one section; a crash is reported in its place, and the other sections still run."""
    started = time.monotonic()
    try:
        outcome = runner(plan, left)
    except Exception as error:  # noqa: BLE001 - a broken section must not hide the others' figures
        outcome = {"error": f"{type(error).__name__}: {error}"}
    outcome["section_seconds"] = round(time.monotonic() - started, 1)
    return outcome


def _tracing(plan: Plan, left: float | None) -> dict[str, Any]:
    from .tracing import measure_tracing

    return anyio.run(measure_tracing, plan.tracing_samples, plan.tracing_warmup)


def _model(plan: Plan, left: float | None) -> dict[str, Any]:
    from .model_roundtrip import measure_model

    return anyio.run(measure_model, plan.model_samples, 20)


def _canonical(plan: Plan, left: float | None) -> dict[str, Any]:
    from .canonical import measure_canonical

    return anyio.run(measure_canonical, plan.canonical_runs)


def _processes(plan: Plan, left: float | None) -> dict[str, Any]:
    from .processes import measure_processes

    return anyio.run(measure_processes, plan.process_runs)


def _workshop(plan: Plan, left: float | None) -> dict[str, Any]:
    from .workshop import measure_workshop

    return anyio.run(measure_workshop, plan.scales)


def _course(plan: Plan, left: float | None) -> dict[str, Any]:
    if not plan.course:
        return {"skipped": "not in --quick; run without --quick for the course figure"}
    from .course import measure_course

    return measure_course(budget_s=None if left is None else max(left, 0.0))


def _setup(plan: Plan, left: float | None) -> dict[str, Any]:
    from .fresh_setup import measure_fresh_setup

    return measure_fresh_setup()


def _faults(plan: Plan, left: float | None) -> dict[str, Any]:
    from .faults import measure_faults

    return measure_faults()


def _classroom(plan: Plan, left: float | None) -> dict[str, Any]:
    from .classroom import measure_classroom

    return measure_classroom()


_RUNNERS: dict[str, Runner] = {
    "tracing": _tracing,
    "model": _model,
    "canonical": _canonical,
    "processes": _processes,
    "workshop": _workshop,
    "course": _course,
    "setup": _setup,
    "faults": _faults,
    "classroom": _classroom,
}

if __name__ == "__main__":
    sys.exit(main())
