"""Shared pytest fixtures: the asyncio backend, a private data folder, and no server process left behind."""

import os
import time
import uuid
from collections.abc import Iterator

import psutil  # a dependency of ipykernel, which the lab pins
import pytest

from labkit.host._warm import warm_python_pid

# Every process a test starts inherits this mark (labkit.host passes LABKIT_* on to lab servers), so one that
# outlives its test is found even after it was re-parented away from pytest.
_SESSION_MARK = "LABKIT_TEST_SESSION"
os.environ.setdefault(_SESSION_MARK, uuid.uuid4().hex)
_SETTLE_SECONDS = 10.0


@pytest.fixture(scope="session", autouse=True)
def _declared_kinds_only() -> Iterator[None]:
    """Every event any test records must be of a kind declared in `labkit.trace.Kind` (the trace's vocabulary)."""
    from labkit.trace import Kind, Trace

    record = Trace.record
    declared = {kind.value for kind in Kind}

    def checked(self, src, dst, kind, *args, **kwargs):
        assert kind in declared, f"event kind {kind!r} is not declared in labkit/trace/_kinds.py"
        return record(self, src, dst, kind, *args, **kwargs)

    Trace.record = checked
    yield
    Trace.record = record


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Servers started by the tests build their business systems here, never in the learner's data/."""
    os.environ.setdefault("LABKIT_DATA_DIR", str(tmp_path_factory.mktemp("labkit-data")))


def _our_processes() -> dict[int, str]:
    """Living processes started from this test session: descendants of pytest, or carrying its mark."""
    mark, me = os.environ[_SESSION_MARK], psutil.Process()
    found = {child.pid: child for child in me.children(recursive=True) if child.pid != warm_python_pid()}
    for process in psutil.process_iter():
        try:
            if process.pid not in (me.pid, warm_python_pid()) and process.environ().get(_SESSION_MARK) == mark:
                found[process.pid] = process
        except (psutil.AccessDenied, psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    alive = {}
    for pid, process in found.items():
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                alive[pid] = " ".join(process.cmdline()[-4:])
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            continue
    return alive


@pytest.fixture(autouse=True)
def _no_orphans(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, the processes it started (servers, clients' children) must be gone again.

    Browser tests are exempt: their kernels belong to the session's JupyterLab, which ends them itself.
    """
    if "lab" in request.fixturenames:
        yield
        return
    baseline = set(_our_processes())
    yield
    deadline = time.monotonic() + _SETTLE_SECONDS
    while (left := {pid: cmd for pid, cmd in _our_processes().items() if pid not in baseline}) and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"processes left running after the test: {left}"
