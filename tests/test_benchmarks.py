"""`python -m benchmarks` measures the real thing: its sections import, and a small workshop runs against real servers.

No test here reads a time: a benchmark reports its figures, it never fails on them.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import anyio
import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize("module", sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem != "__main__"))
def test_every_benchmark_module_imports(module: str) -> None:
    # A section that cannot import fails only when the whole benchmark runs: two did, after modules were renamed.
    importlib.import_module(f"benchmarks.{module}")


def test_the_workshop_runs_its_learners_against_real_servers_and_the_other_key_is_refused() -> None:
    from benchmarks.environment import lab_environment
    from benchmarks.workshop import measure_workshop

    with lab_environment():
        results = anyio.run(measure_workshop, (2,))
    for configuration in ("single_server", "two_replicas"):
        run = results[configuration][2]
        assert (run["errors"], run["first_error"]) == (0, None)
        assert run["tasks"] >= run["learners"]
    assert results["retry_on_replica_with_other_key"]["rejected"] is True
