"""Shared pytest fixtures: the asyncio backend, a private data folder, and no server process left behind."""

import os
import time
import uuid
from collections.abc import Iterator

import pytest

from replays.leftovers import SESSION_MARK, our_processes

# Every process a test starts with the test's environment inherits this mark, so one that outlives its test is
# found even after it was re-parented away from pytest.
os.environ.setdefault(SESSION_MARK, uuid.uuid4().hex)
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

    Trace.record = checked  # type: ignore[method-assign]
    yield
    Trace.record = record  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session", autouse=True)
def _private_data_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Servers started by the tests build their business systems here, never in the learner's data/."""
    os.environ.setdefault("LABKIT_DATA_DIR", str(tmp_path_factory.mktemp("labkit-data")))


@pytest.fixture(autouse=True)
def _no_orphans(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test, the processes it started (servers, clients' children) must be gone again.

    Browser tests are exempt: their kernels belong to the session's JupyterLab, which ends them itself.
    """
    if "lab" in request.fixturenames:
        yield
        return
    baseline = set(our_processes())
    yield
    deadline = time.monotonic() + _SETTLE_SECONDS
    while (
        left := {pid: cmd for pid, cmd in our_processes().items() if pid not in baseline}
    ) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"processes left running after the test: {left}"
