"""A pytest plugin (`-p tests.cpu_per_file`): the CPU seconds each test file used, the costliest printed at the end.

CPU seconds, not wall time: on a machine shared with other work the wall time of a test says little about its work.
A test's share is what the CPU time of this process and all its descendants grew by during its setup, call and
teardown: the processes alive (warm Pythons, servers) and those that ended and were reaped by one of them (servers
forked by a warm Python, kernels, CLIs). A module's or session's fixture counts in the test that set it up or tore
it down.
`tools/run_tests.py` loads it in the test suites, so each suite's log says where its CPU time went.
"""

from __future__ import annotations

import resource
from collections import defaultdict
from collections.abc import Iterator

import psutil  # a dependency of ipykernel, which the lab pins
import pytest

_SHOWN = 10
_spent: defaultdict[str, float] = defaultdict(float)


def _cpu_seconds() -> float:
    """This process's CPU time, its reaped children's, and that of each living descendant and of the ones it reaped."""
    own, reaped = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    before = _cpu_seconds()
    try:
        return (yield)
    finally:
        _spent[item.location[0]] += _cpu_seconds() - before


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not _spent:
        return
    total, tests = _cpu_seconds(), sum(_spent.values())
    terminalreporter.write_sep("-", f"CPU seconds per test file, the {_SHOWN} costliest")
    for path, seconds in sorted(_spent.items(), key=lambda item: -item[1])[:_SHOWN]:
        terminalreporter.write_line(f"{seconds:8.1f}  {path}")
    terminalreporter.write_line(
        f"{tests:8.1f}  all {len(_spent)} files; {total - tests:.1f} more outside any test (collection, start-up)"
    )
