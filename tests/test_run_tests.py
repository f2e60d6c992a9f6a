"""`tools/run_tests.py` (`make test`): at most `--jobs` suites at once, a named-only suite waits for a free place."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Each stand-in suite notes when it started and ended (its log is its stdout), and fails if told to. Told to wait
# for another ("-": none), it ends only once that one has started (or after 10 s): "side by side" is then shown by
# the order of the notes, however slowly a loaded machine starts each Python.
_SUITE = """
import os, sys, time
folder, name, seconds, code, other = sys.argv[1:]
print('start', time.monotonic(), flush=True)
open(os.path.join(folder, name + '.started'), 'w').close()
deadline = time.monotonic() + 10
while other != '-' and not os.path.exists(os.path.join(folder, other + '.started')) and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(float(seconds))
print('end', time.monotonic())
sys.exit(int(code))
"""


def _runner(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, suites: dict[str, tuple[float, int, str]]) -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_tests_tool", ROOT / "tools" / "run_tests.py")
    assert spec is not None and spec.loader is not None, "tools/run_tests.py is there"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "REPO", tmp_path)
    monkeypatch.setattr(module, "LOGS", tmp_path / "logs")
    monkeypatch.setattr(
        module,
        "suites",
        lambda: {
            name: [sys.executable, "-c", _SUITE, str(tmp_path), name, str(seconds), str(code), other]
            for name, (seconds, code, other) in suites.items()
        },
    )
    monkeypatch.setattr(module, "_NAMED_ONLY", ("late",))
    return module


def _noted(log: Path) -> dict[str, float]:
    return {word: float(value) for word, value in (line.split() for line in log.read_text().splitlines())}


def test_a_suite_beyond_jobs_starts_only_once_another_has_ended(monkeypatch, tmp_path: Path, capsys) -> None:
    waiting = {"short": (0.2, 0, "long"), "long": (0.2, 0, "late"), "late": (0.1, 0, "-")}
    runner = _runner(monkeypatch, tmp_path, waiting)
    assert runner.main(["--jobs", "2", "short", "long", "late"]) == 0
    short, long, late = (_noted(tmp_path / "logs" / f"{name}.log") for name in ("short", "long", "late"))
    assert short["start"] < long["end"] and long["start"] < short["end"]  # the first two side by side
    assert short["end"] <= late["start"] < long["end"]  # the third took the place the first left
    said = capsys.readouterr().out
    assert said.index("== late: python") > said.index("== short: passed")


def test_a_named_only_suite_is_left_out_by_default_and_a_failing_suite_fails_the_run(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    runner = _runner(monkeypatch, tmp_path, {"good": (0.0, 0, "-"), "bad": (0.0, 3, "-"), "late": (0.0, 0, "-")})
    assert runner.main([]) == 1
    said = capsys.readouterr().out
    assert "== bad: FAILED (exit 3)" in said and "== good: passed" in said
    assert "late" not in said and not (tmp_path / "logs" / "late.log").exists()


def test_the_tests_suite_reports_its_coverage_in_the_line_it_ends_with(tmp_path: Path, capsys) -> None:
    spec = importlib.util.spec_from_file_location("run_tests_tool", ROOT / "tools" / "run_tests.py")
    assert spec is not None and spec.loader is not None, "tools/run_tests.py is there"
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    assert "--cov" in runner.suites()["tests"] and "--cov" not in runner.suites()["notebooks"]
    log = tmp_path / "tests.log"
    log.write_text("Name    Stmts   Miss  Cover\nTOTAL   200     50    75%\n==== 3 passed in 1.00s ====\n")
    assert runner._report("tests", SimpleNamespace(returncode=0), log, 0.0, 0.0)
    assert "3 passed in 1.00s; 75% of labkit's and the servers' lines run in-process" in capsys.readouterr().out


# A suite whose work is done by a process it starts and waits for, which notes the CPU seconds both used.
_WORKING_SUITE = """
import resource, subprocess, sys
subprocess.run([sys.executable, '-c', 'sum(i * i for i in range(3_000_000))'], check=True)
used = sum(getattr(resource.getrusage(who), field) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
           for field in ('ru_utime', 'ru_stime'))
print('used', used, flush=True)
"""


def test_a_suite_ends_with_the_cpu_seconds_it_and_the_processes_it_waited_for_used(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    runner = _runner(monkeypatch, tmp_path, {})
    monkeypatch.setattr(runner, "suites", lambda: {"working": [sys.executable, "-c", _WORKING_SUITE]})
    assert runner.main(["working"]) == 0
    used = _noted(tmp_path / "logs" / "working.log")["used"]
    (reported,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("== working: passed")]
    cpu = float(reported.split("(")[1].split(" CPU-s)")[0])
    assert used > 0 and cpu >= round(used, 1) - 0.1  # the suite's own count, and what it did after counting


# A suite that leaves behind a process that works on after it ended (as a warm Python and its servers outlive
# pytest), which notes the CPU seconds it used.
_LEAVING_SUITE = """
import subprocess, sys
subprocess.Popen([sys.executable, '-c', '''
import time
while time.process_time() < 0.5:
    sum(i * i for i in range(10_000))
print('used', time.process_time(), flush=True)
'''])
"""


def test_a_suite_s_cpu_seconds_include_a_process_that_outlived_it(monkeypatch, tmp_path: Path, capsys) -> None:
    runner = _runner(monkeypatch, tmp_path, {})
    monkeypatch.setattr(runner, "suites", lambda: {"leaving": [sys.executable, "-c", _LEAVING_SUITE]})
    assert runner.main(["leaving"]) == 0
    used = _noted(tmp_path / "logs" / "leaving.log")["used"]
    (reported,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("== leaving: passed")]
    assert float(reported.split("(")[1].split(" CPU-s)")[0]) >= round(used, 1) - 0.1 >= 0.4
