"""Run the lab's test suites side by side (`make test`): the tests in four suites, the English and Chinese notebooks.

    python tools/run_tests.py [--serial | --jobs N] [SUITE ...]
        (suites: tests, tests-processes, tests-attacks, tests-faults, notebooks, notebooks-zh-CN; and
        browser-classroom and browser, only when named)

Each suite is one pytest process; they share no files (the Chinese notebooks get a data folder of their
own, each test process makes its own), so on a machine with two cores they take about half the time in a
row. The tests are four suites: most of their time is spent waiting (for servers, kernels, a hub, a sandbox
started cold), and one pytest waits for one thing at a time, so the waits of four overlap where those of one
added up (in one suite, the tests alone took over 20 minutes for 9 minutes of CPU). `tests-processes` holds the
files that start whole rooms, kernels and warm Pythons; `tests-attacks` the attack corpus and the security tests
(many sandboxed servers, started cold); `tests-faults` the fault tests; `tests` the rest.
At most `--jobs` suites run at once (4); a suite named beyond that starts, in order, as soon as one ends.
CI names the browser check's two suites first (`.ci/browser.sh`: the lessons in JupyterLab and Chromium, which
needs Chromium; `browser-classroom` is tests/browser/test_classroom.py, `browser` the other files: about 400 CPU-s
each, measured test by test before the course run took in lesson 07), as the suites with the most CPU seconds, so
that they do not run alone at the end; the two cores are never shared more thinly than by four suites.
Each suite's output goes to `out/test-logs/<suite>.log`; a line is printed as each ends (its wall time and CPU
seconds: on a busy machine the first grows, the second hardly), and the whole
log of a suite that failed. The `tests` suite also reports its coverage of labkit and the servers (no threshold).
The exit status is 0 only if every suite passed.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOGS = REPO / "out" / "test-logs"
_PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
# The test suites' logs end with the CPU seconds of their costliest files (`tests/cpu_per_file.py`).
_PER_FILE = ["-p", "tests.cpu_per_file"]
# nbval, with each solution's exercises run in its lesson's kernel after the lesson (`tests/nbval_pairs.py`)
_NBVAL = [*_PYTEST, "-p", "tests.nbval_pairs", "--nbval-pairs", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg"]
# The `tests` suite measures which lines of labkit and the servers it runs in its own process (pyproject's
# [tool.coverage]); a report, no threshold. Servers started as subprocesses are not counted.
_COVERAGE = ["--cov", "--cov-report=term:skip-covered"]
_HEARTBEAT_S = 120
# Each suite runs under it, so that its CPU seconds include the processes that outlive their parent (warm Pythons, and
# the servers and kernels they forked).
_SUBREAPER = Path(__file__).with_name("subreaper.py")
_APART = {
    "tests-processes": (
        "tests/test_hub_room.py",
        "tests/test_warm_kernels.py",
        "tests/test_warm_start.py",
        "tests/test_remote_exercises.py",
    ),
    "tests-attacks": ("tests/attack_corpus", "tests/test_security*.py"),
    "tests-faults": ("tests/test_faults*.py",),
}
# The browser check (`.ci/browser.sh`) as two suites, each its own JupyterLab and Chromium: one pytest is one test at a
# time, and as one suite it ran alone for the last minutes of CI, on one of the two cores.
_BROWSER_APART = "tests/browser/test_classroom.py"
_NAMED_ONLY = ("browser-classroom", "browser")
_JOBS = 4


def suites() -> dict[str, list[str]]:
    """Each suite's command. Notebooks run in order within a suite: a lesson may use an earlier one's data."""
    apart = {
        name: sorted(str(p.relative_to(REPO)) for pattern in patterns for p in REPO.glob(pattern))
        for name, patterns in _APART.items()
    }
    elsewhere = [f"--ignore={path}" for paths in apart.values() for path in paths]
    browser = sorted(str(p.relative_to(REPO)) for p in REPO.glob("tests/browser/test_*.py"))
    return {
        "tests": [*_PYTEST, *_PER_FILE, *_COVERAGE, "tests", *elsewhere],
        **{name: [*_PYTEST, *_PER_FILE, *paths] for name, paths in apart.items()},
        "notebooks": [*_NBVAL, "notebooks", "solutions"],
        "notebooks-zh-CN": [*_NBVAL, "zh-CN/notebooks", "zh-CN/solutions"],
        "browser-classroom": ["bash", ".ci/browser.sh", _BROWSER_APART],
        "browser": ["bash", ".ci/browser.sh", *(path for path in browser if path != _BROWSER_APART)],
    }


def _start(name: str, command: list[str], data: Path) -> tuple[subprocess.Popen, Path, float]:
    # The Chinese notebooks get business systems of their own, so that they can run beside the English ones.
    own = {"LABKIT_DATA_DIR": str(data)} if name == "notebooks-zh-CN" else {}
    log = LOGS / f"{name}.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, str(_SUBREAPER), *command],
            cwd=REPO,
            env={**os.environ, "LABKIT_SCRIPTED_USER": "1", **own},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    shown = [f"{key}={value}" for key, value in own.items()] + (
        ["python", *command[1:]] if command[0] == sys.executable else command
    )
    print(f"== {name}: {shlex.join(shown)}  (log: {log.relative_to(REPO)})", flush=True)
    return process, log, time.monotonic()


def _ended(process: subprocess.Popen) -> float | None:
    """The CPU seconds a suite's processes used, all of them (`tools/subreaper.py`): a measure of its work that a busy
    machine does not stretch, as it stretches the wall time; once it has ended, None while it runs."""
    pid, status, usage = os.wait4(process.pid, os.WNOHANG)
    if pid == 0:
        return None
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def _report(name: str, process: subprocess.Popen, log: Path, started: float, cpu: float) -> bool:
    """Print how a suite ended (its whole log if it failed); True if it passed."""
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    summary = lines[-1].strip("= ") if lines else "no output"
    if covered := [line.split()[-1] for line in lines if line.startswith("TOTAL ")]:
        summary += f"; {covered[-1]} of labkit's and the servers' lines run in-process"
    verdict = "passed" if process.returncode == 0 else f"FAILED (exit {process.returncode})"
    print(f"== {name}: {verdict} in {time.monotonic() - started:.0f} s ({cpu:.1f} CPU-s) — {summary}", flush=True)
    if process.returncode != 0:
        print("\n".join(lines), flush=True)
    return process.returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/run_tests.py", description=__doc__.split("\n")[0])
    known = suites()
    default = [name for name in known if name not in _NAMED_ONLY]
    parser.add_argument(
        "suite",
        nargs="*",
        help=f"the suites to run, started in the order given: {', '.join(known)} (default: {', '.join(default)})",
    )
    at_once = parser.add_mutually_exclusive_group()
    at_once.add_argument("--serial", action="store_const", const=1, dest="jobs", help="one suite at a time")
    at_once.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help=f"at most N suites at once (default {_JOBS}); the others start as these end",
    )
    parser.set_defaults(jobs=_JOBS)
    options = parser.parse_args(argv)
    if unknown := sorted(set(options.suite) - set(known)):
        parser.error(f"unknown suite {', '.join(unknown)}; choose from {', '.join(known)}")
    if options.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {options.jobs}")
    pending = [(name, known[name]) for name in dict.fromkeys(options.suite or default)]
    LOGS.mkdir(parents=True, exist_ok=True)
    passed, last_word = True, time.monotonic()
    running: dict[str, tuple[subprocess.Popen, Path, float]] = {}
    with tempfile.TemporaryDirectory(prefix="labkit-test-data-") as data:
        try:
            while pending or running:
                if pending and len(running) < options.jobs:
                    name, command = pending.pop(0)
                    running[name] = _start(name, command, Path(data) / name)
                    continue
                for name, (process, _, _) in list(running.items()):
                    if (cpu := _ended(process)) is not None:
                        passed = _report(name, *running.pop(name), cpu) and passed
                if running and time.monotonic() - last_word > _HEARTBEAT_S:
                    last_word = time.monotonic()
                    print(
                        "   still running: "
                        + ", ".join(
                            f"{name} ({(last_word - started) / 60:.0f} min)"
                            for name, (_, _, started) in running.items()
                        ),
                        flush=True,
                    )
                time.sleep(0.5)
        finally:
            for process, _, _ in running.values():
                process.terminate()
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
