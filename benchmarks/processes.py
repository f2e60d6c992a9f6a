"""Figure 8: whole processes side by side: the CLI against the bare SDK, `import labkit` against `import mcp`."""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio

from .environment import REPO_ROOT
from .stats import compare, time_interleaved

__all__ = ["IMPORTS", "RUNS", "measure_processes"]

_PYTHON = [sys.executable]
RUNS = {
    "canonical CLI": [*_PYTHON, "-m", "labkit", "run", "canonical", "--json"],
    "bare SDK script": [*_PYTHON, str(REPO_ROOT / "benchmarks" / "bare_sdk_canonical.py")],
}
"""Target: the lab's canonical run, doing more (model, trace, gate), takes at most the bare script's time."""
IMPORTS = {
    "import labkit": [*_PYTHON, "-c", "import labkit; labkit.Trace"],
    "import mcp": [*_PYTHON, "-c", "import mcp"],
}
"""Target: the facade, touched as a notebook's first cell does, costs at most 1.5 times the SDK's import."""


async def measure_processes(samples: int, timeout_s: float = 180.0) -> dict[str, Any]:
    """Median wall time of each command, started as a new process, in rotating order after one warm-up."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))}
    results: dict[str, Any] = {}
    for figure, commands, target in (("run", RUNS, 1.0), ("import", IMPORTS, 1.5)):
        names = list(commands)
        probes = [_probe(commands[name], env, timeout_s) for name in names]
        subject_s, baseline_s = await time_interleaved(probes, samples, warmup=1)
        comparison = compare(baseline_s, subject_s)
        results[figure] = {
            "subject": names[0], "baseline": names[1], **comparison.as_dict(), "target_ratio": target,
            "meets_target": comparison.ratio <= target,
            "samples_s": {names[0]: [round(s, 3) for s in subject_s], names[1]: [round(s, 3) for s in baseline_s]},
        }
    return results


def _probe(command: list[str], env: dict[str, str], timeout_s: float):
    async def run() -> None:
        with anyio.fail_after(timeout_s):
            await anyio.run_process(command, cwd=REPO_ROOT, env=env, check=True)

    return run
