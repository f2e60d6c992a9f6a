"""Figure 8: whole processes side by side: the CLI against the bare SDK, `import labkit` against `import mcp`, and warm
starts of a lab server and of a lesson's kernel."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
from jupyter_client.manager import start_new_kernel
from mcp import Client
from mcp.client.stdio import stdio_client

from labkit.host import WARM_START_ENV, ServerSpec, free_port, http_server, stdio_params

from .environment import REPO_ROOT
from .stats import compare, time_interleaved

__all__ = ["IMPORTS", "RUNS", "START_TARGET", "measure_processes"]

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
START_TARGET = 0.25
"""Target: a lab server forked by the host's warm Python, up to its tool list, in a quarter of a cold start's time."""
_LESSON = REPO_ROOT / "notebooks" / "03_nineteen_steps.ipynb"


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
            "subject": names[0],
            "baseline": names[1],
            **comparison.as_dict(),
            "target_ratio": target,
            "meets_target": comparison.ratio <= target,
            "samples_s": {names[0]: [round(s, 3) for s in subject_s], names[1]: [round(s, 3) for s in baseline_s]},
        }
    results["start"] = await _measure_start(samples, timeout_s)
    results["http start"] = await _measure_http_start(samples, timeout_s)
    results["kernel"] = await _measure_kernel(samples, timeout_s)
    return results


async def _measure_start(samples: int, timeout_s: float) -> dict[str, Any]:
    """The logs server started over stdio up to its tool list, forked warm against started cold, in this process."""

    async def start(warm: bool) -> None:
        os.environ[WARM_START_ENV] = "1" if warm else "0"
        try:
            with anyio.fail_after(timeout_s):
                async with Client(stdio_client(stdio_params(ServerSpec("logs")))) as client:
                    await client.list_tools()
        finally:
            os.environ.pop(WARM_START_ENV)

    warm_s, cold_s = await time_interleaved([lambda: start(True), lambda: start(False)], samples, warmup=1)
    return _warm_against_cold("warm start", warm_s, "cold start", cold_s, START_TARGET)


async def _measure_http_start(samples: int, timeout_s: float) -> dict[str, Any]:
    """The logs server over Streamable HTTP up to its tool list, both started cold: as the host starts it (on a port
    it binds and holds, answered once the server serves it) against the SDK's way (`--port`, polled until it listens).
    """

    async def hosts(url: str) -> None:
        async with Client(url) as client:
            await client.list_tools()

    async def held() -> None:
        with anyio.fail_after(timeout_s):
            started = http_server("logs")
            url = await anyio.to_thread.run_sync(started.__enter__)
            try:
                await hosts(url)
            finally:
                await anyio.to_thread.run_sync(started.__exit__, None, None, None)

    async def bare() -> None:
        port = free_port()
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        command = [*_PYTHON, "-m", "servers.logs", "--http", "--port", str(port)]
        with anyio.fail_after(timeout_s):
            async with await anyio.open_process(command, cwd=REPO_ROOT, env=env, stdout=None, stderr=None) as server:
                try:
                    while True:
                        try:
                            await (await anyio.connect_tcp("127.0.0.1", port)).aclose()
                            break
                        except OSError:
                            await anyio.sleep(0.02)
                    await hosts(f"http://127.0.0.1:{port}/mcp")
                finally:
                    server.terminate()

    os.environ[WARM_START_ENV] = "0"
    try:
        held_s, bare_s = await time_interleaved([held, bare], samples, warmup=1)
    finally:
        os.environ.pop(WARM_START_ENV)
    return _warm_against_cold("HTTP server the host holds a port for", held_s, "bare SDK --port", bare_s, None)


async def _measure_kernel(samples: int, timeout_s: float) -> dict[str, Any]:
    """A kernel in the lessons' folder up to the end of lesson 03's setup cell, then stopped (as nbval stops it):
    forked by Jupyter's warm Python against started by jupyter_client, in this process. Reported, with no target:
    both wait on jupyter_client (0.2 s of IOPub silence before a kernel counts as ready, a 0.1 s poll as it stops)."""
    from labkit import _warm_kernels

    cells = json.loads(_LESSON.read_text(encoding="utf-8"))["cells"]
    setup = "".join(next(cell for cell in cells if cell["cell_type"] == "code")["source"])

    def lesson(warm: bool) -> None:
        os.environ[WARM_START_ENV] = "1" if warm else "0"
        try:
            manager, client = start_new_kernel(
                kernel_name="python3", cwd=str(_LESSON.parent), startup_timeout=timeout_s
            )
            try:
                reply = client.execute_interactive(setup, timeout=timeout_s, output_hook=lambda _: None)
                assert reply["content"]["status"] == "ok", reply["content"]
            finally:
                client.stop_channels()
                manager.shutdown_kernel(now=True)
        finally:
            os.environ.pop(WARM_START_ENV)

    await anyio.to_thread.run_sync(lesson, True)  # the first launch starts the warm Pythons, as a lesson's first kernel
    if not await anyio.to_thread.run_sync(_warm_kernels.wait_until_ready, timeout_s):
        return {"skipped": "Jupyter's warm Pythons did not start here (not Linux, or LABKIT_WARM_START=0)"}
    warm_s, cold_s = await time_interleaved(
        [lambda: anyio.to_thread.run_sync(lesson, True), lambda: anyio.to_thread.run_sync(lesson, False)],
        samples,
        warmup=1,
    )
    return _warm_against_cold("forked kernel", warm_s, "kernel jupyter_client starts", cold_s, None)


def _warm_against_cold(
    warm: str, warm_s: list[float], cold: str, cold_s: list[float], target: float | None
) -> dict[str, Any]:
    comparison = compare(cold_s, warm_s)
    return {
        "subject": warm,
        "baseline": cold,
        **comparison.as_dict(),
        "target_ratio": target,
        "meets_target": None if target is None else comparison.ratio <= target,
        "samples_s": {warm: [round(s, 3) for s in warm_s], cold: [round(s, 3) for s in cold_s]},
    }


def _probe(command: list[str], env: dict[str, str], timeout_s: float):
    async def run() -> None:
        with anyio.fail_after(timeout_s):
            await anyio.run_process(command, cwd=REPO_ROOT, env=env, check=True)

    return run
