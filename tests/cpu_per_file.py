"""A pytest plugin (`-p tests.cpu_per_file`): the CPU seconds each test file used, the costliest printed at the end.

CPU seconds, not wall time: on a machine shared with other work the wall time of a test says little about its work.
A test's share is this process's CPU time during its setup, call and teardown, and that of the children it reaped
meanwhile (servers, kernels, CLIs); a module's or session's fixture counts in the test that set it up or tore it down.
`tools/run_tests.py` loads it in the test suites, so each suite's log says where its CPU time went.
"""

from __future__ import annotations

import resource
from collections import Counter
from collections.abc import Iterator

import pytest

_SHOWN = 10
_spent: Counter[str] = Counter()


def _cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


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
    for path, seconds in _spent.most_common(_SHOWN):
        terminalreporter.write_line(f"{seconds:8.1f}  {path}")
    terminalreporter.write_line(
        f"{tests:8.1f}  all {len(_spent)} files; {total - tests:.1f} more outside any test (collection, start-up)"
    )
