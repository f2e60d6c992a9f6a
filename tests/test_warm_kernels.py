"""Jupyter kernels forked by a warm Python: the same kernel as jupyter_client's exec, in every way a lesson can see."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import psutil
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager, start_new_kernel

from labkit import _warm_kernels
from labkit._warm import LENT_ENV, WARM_START_ENV, Forked, fork
from labkit.host import REPO_ROOT
from tests.kernel_helpers import LIMIT, printed, shell_reply, until

NOTEBOOKS = str(REPO_ROOT / "notebooks")
# What a lesson could see of how its kernel was started, and of the libraries it imports once started: pandas's display
# options, matplotlib's inline figures and ipywidgets' comm target depend on the kernel they are imported in. The two
# per-launch variables differ by design.
REPORT = f"""
import json, locale, os, signal, sys, time
import comm, ipywidgets, matplotlib, matplotlib.pyplot, pandas
print(json.dumps({{
    "pandas": {{o: pandas.get_option(o) for o in ("display.max_columns", "display.width", "display.max_rows")}},
    "frame": repr(pandas.DataFrame([range(30)] * 3)),
    "backend": [matplotlib.rcParams._get("backend"), matplotlib.get_backend()],
    "figure_formats": sorted(str(t) for t in get_ipython().display_formatter.formatters["image/png"].type_printers),
    "comm_targets": sorted(comm.get_comm_manager().targets),
    "argv": [*sys.argv[:-1], os.path.basename(sys.argv[-1]).startswith("kernel-")],
    "path": sys.path, "cwd": os.getcwd(), "executable": sys.executable, "flags": list(sys.flags),
    "env": {{k: v for k, v in os.environ.items() if k not in ("JPY_SESSION_NAME", {LENT_ENV!r})}},
    "session_leader": os.getsid(0) == os.getpgid(0) == os.getpid(),
    "signals": {{s: repr(signal.getsignal(getattr(signal, s))) for s in ("SIGINT", "SIGTERM", "SIGCHLD", "SIGPIPE")}},
    "stdin_at_its_end": os.read(0, 1) == b"",
    "streams": [(s.encoding, s.errors, s.line_buffering) for s in (sys.__stdout__, sys.__stderr__)],
    "encoding": locale.getpreferredencoding(False),
    "tz": time.tzname, "umask": os.umask(0o22),
}}))
"""


@pytest.fixture(scope="module")
def warm() -> Iterator[None]:
    """Jupyter's warm Pythons for this process's environment, started by a first launch and ready; stopped after.

    The tests' own launches are forked by them although pytest names another test phase in each one's environment.
    """
    _stop_warm_pythons()
    _report()
    _wait_until_ready()
    yield
    _stop_warm_pythons()


def _stop_warm_pythons() -> None:
    for warm in _warm_kernels._by_environment.values():
        warm.kernels.stop()
        warm.servers.stop()
    _warm_kernels._by_environment.clear()


def _report(cwd: str = NOTEBOOKS, **kwargs: Any) -> tuple[dict, Any]:
    manager, client = start_new_kernel(kernel_name="python3", cwd=cwd, **kwargs)
    try:
        return json.loads(printed(manager, client, REPORT)), manager.provisioner.process
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


def _wait_until_ready() -> None:
    assert _warm_kernels.wait_until_ready(LIMIT)


def _answers(client: Any, look: float) -> bool:
    try:
        client.wait_for_ready(timeout=look)
    except RuntimeError:
        return False
    return True


def _exited(process: subprocess.Popen, look: float) -> bool:
    try:
        process.wait(look)
    except subprocess.TimeoutExpired:
        return False
    return True


def _ended(processes: list[psutil.Process], look: float) -> bool:
    _gone, alive = psutil.wait_procs(processes, timeout=look)
    return not alive


def test_a_forked_kernel_sees_what_a_kernel_jupyter_client_started_sees(
    warm: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {name: value for name, value in os.environ.items() if name != WARM_START_ENV}
    monkeypatch.setenv(WARM_START_ENV, "0")  # read by the provisioner, in this process: the kernel's env is `env`
    cold, started = _report(env=env)
    monkeypatch.delenv(WARM_START_ENV)
    forked, forked_by = _report(env=env)
    assert not isinstance(started, Forked) and isinstance(forked_by, Forked)
    assert {key: (cold[key], forked[key]) for key in cold if cold[key] != forked[key]} == {}
    assert forked["session_leader"] and forked["stdin_at_its_end"]


def test_a_forked_kernel_is_interrupted_restarted_and_shut_down_as_any_kernel(warm: None) -> None:
    manager, client = start_new_kernel(kernel_name="python3", cwd=NOTEBOOKS)
    try:
        first = manager.provisioner.process
        assert isinstance(first, Forked)
        message = client.execute("import time; time.sleep(60)")
        time.sleep(1.0)
        manager.interrupt_kernel()
        reply = shell_reply(manager, client, message)
        assert (reply["content"]["status"], reply["content"]["ename"]) == ("error", "KeyboardInterrupt")
        manager.restart_kernel(now=False)
        until(lambda look: _answers(client, look), manager.provisioner.pid, "the restarted kernel's first answer")
        again = manager.provisioner.process
        assert isinstance(again, Forked) and again.pid != first.pid and first.returncode == 0
        assert printed(manager, client, "print(40 + 2)").strip() == "42"
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)
    assert again.returncode == 0, f"the kernel ended with {again.returncode}: it was stopped, it did not exit"


def test_a_killed_forked_kernel_takes_its_servers_with_it(warm: None) -> None:
    manager, client = start_new_kernel(kernel_name="python3", cwd=NOTEBOOKS)
    try:
        warm, *servers = json.loads(
            printed(
                manager,
                client,
                (
                    "import json, psutil\nfrom labkit import Host, ServerSpec, Trace\n"
                    "from labkit.processes._warm import warm_python_pid\n"
                    "host = Host(Trace(), [ServerSpec('logs'), ServerSpec('charts')])\n"
                    "await host.__aenter__()\n"
                    "print(json.dumps([warm_python_pid(), *[p.pid for p in psutil.Process(warm_python_pid())"
                    ".children()]]))"
                ),
            )
        )
        # The host started no warm Python of its own: the one for servers Jupyter's provisioner lent forked them.
        assert warm in _warm_kernels.warm_python_pids() and len(servers) == 2
        kernel = manager.provisioner.process
        manager.shutdown_kernel(now=True)  # SIGKILL to the kernel's process group: nothing gets to clean up
    finally:
        client.stop_channels()
    assert kernel.returncode == -signal.SIGKILL
    ending = [psutil.Process(pid) for pid in servers if psutil.pid_exists(pid)]
    until(lambda look: _ended(ending, look), tuple(servers), "the killed kernel's servers' end")
    assert psutil.Process(warm).is_running()  # it serves the next kernel


ORPHAN = (
    "import subprocess, sys\n"  # a child that starts `sleep 2` and ends at once, leaving it an orphan
    'child = subprocess.run([sys.executable, \'-c\', \'import subprocess; print(subprocess.Popen(["sleep", "2"],'
    " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).pid)'], capture_output=True, text=True, check=True)\n"
    "print(child.stdout.strip())"
)


def test_an_orphan_below_a_forked_kernel_is_adopted_and_reaped_by_the_warm_python(warm: None) -> None:
    # Orphans go to the nearest subreaper: the warm Python reaps them the moment they end, where an init may take
    # seconds (a zombie meanwhile, which psutil.wait_procs, in notebook 05, waits for).
    manager, client = start_new_kernel(kernel_name="python3", cwd=NOTEBOOKS)
    try:
        orphan = psutil.Process(int(printed(manager, client, ORPHAN)))
        assert orphan.ppid() in _warm_kernels.warm_python_pids()
        # Gone only once reaped: an ended child not reaped yet (a zombie) still exists.
        reapers = tuple(_warm_kernels.warm_python_pids())
        until(lambda look: _ended([orphan], look), reapers, "the orphan's end, reaped by the warm Python")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def test_a_server_of_a_forked_kernel_sees_what_a_cold_started_one_sees(warm: None) -> None:
    manager, client = start_new_kernel(kernel_name="python3", cwd=NOTEBOOKS)
    code = (
        "import json, os\nfrom mcp import Client\nfrom labkit import ServerSpec, Trace, stdio_transport\n"
        "async def started_with():\n"
        "    async with Client(stdio_transport(ServerSpec('replays.env_server'), Trace())) as c:\n"
        "        return (await c.call_tool('started_with', {'name': 'PYTHONPATH'})).structured_content\n"
        "warm = await started_with()\nos.environ['LABKIT_WARM_START'] = '0'\ncold = await started_with()\n"
        "print(json.dumps({k: (warm[k], cold[k]) for k in warm if k != 'pid' and warm[k] != cold[k]}))"
    )
    try:
        assert isinstance(manager.provisioner.process, Forked)
        assert json.loads(printed(manager, client, code)) == {}
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=False)


WAITED = "Jupyter's event loop waited for the warm Python's answer"
TURNED = "Jupyter's event loop went on while the launch waited for the warm Python"


async def test_jupyters_event_loop_goes_on_while_a_warm_python_is_slow_to_fork_a_kernel(warm: None) -> None:
    """A loaded machine makes a warm Python slow to answer (here: stopped until the outcome is known). Meanwhile the
    loop that serves every request of the Jupyter server must go on: the launch waits in a thread of its own."""
    stopped = [w.kernels.pid for w in _warm_kernels._by_environment.values() if w.ready()]
    assert stopped, "no warm Python ready to fork kernels"
    loop_thread, launch_waits, loop_went_on = threading.get_ident(), threading.Event(), threading.Event()
    outcome: list[str] = []
    decided = threading.Event()

    def watch() -> None:  # the outcome, from where each thread is: no clock involved
        while not decided.is_set():
            waiting = {ident for ident, frame in sys._current_frames().items() if _inside(frame, fork.__code__)}
            if loop_thread in waiting:
                outcome.append(WAITED)
            elif waiting and loop_went_on.is_set():
                outcome.append(TURNED)
            elif waiting:
                launch_waits.set()
            if outcome:
                decided.set()
            decided.wait(0.005)
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)

    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    manager = AsyncKernelManager(kernel_name="python3")
    try:
        launch: asyncio.Future[None] = asyncio.ensure_future(manager.start_kernel(cwd=NOTEBOOKS))
        while not decided.is_set():
            if launch_waits.is_set():
                loop_went_on.set()  # this line ran: the loop turned while the launch waited
            if launch.done():
                outcome.append(f"the launch ended without asking a warm Python: {launch}")
                decided.set()
            await asyncio.sleep(0.005)
        await launch
        assert outcome[0] == TURNED
        assert isinstance(manager.provisioner.process, Forked)
    finally:
        decided.set()
        watcher.join()
        if manager.has_kernel:
            await manager.shutdown_kernel(now=True)


def _inside(frame: FrameType | None, code: CodeType) -> bool:
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False


@pytest.mark.parametrize("launch", ["a folder with a yaml.py", "a folder with a matplotlibrc", "another environment"])
def test_a_launch_the_warm_python_cannot_serve_as_an_exec_would_starts_the_usual_way(
    warm: None, tmp_path: Path, launch: str
) -> None:
    kwargs: dict[str, Any] = {}
    if launch == "a folder with a yaml.py":
        (tmp_path / "yaml.py").write_text("print('the learner\\'s own yaml')\n")
    elif launch == "a folder with a matplotlibrc":
        (tmp_path / "matplotlibrc").write_text("figure.dpi: 50\n")
    else:
        kwargs["env"] = {**os.environ, "LABKIT_LANG": "zh_CN"}  # a module could read it when imported
    _, process = _report(str(tmp_path), **kwargs)
    assert not isinstance(process, Forked)


def test_a_later_launch_with_the_other_environment_is_forked_by_a_warm_python_started_in_it(warm: None) -> None:
    env = {**os.environ, "LABKIT_LANG": "zh_CN"}
    _report(env=env)
    _wait_until_ready()
    report, process = _report(env=env)
    assert isinstance(process, Forked) and report["env"]["LABKIT_LANG"] == "zh_CN"


def test_the_labs_python3_kernel_spec_names_the_warm_provisioner_and_this_python() -> None:
    spec = KernelSpecManager().get_kernel_spec("python3")
    assert spec.metadata["kernel_provisioner"]["provisioner_name"] == _warm_kernels.PROVISIONER
    assert spec.argv[0] in (sys.executable, "python")


JUPYTER = """
import json, sys, time
from jupyter_client.manager import start_new_kernel
from labkit import _warm_kernels
cold, _ = start_new_kernel(kernel_name="python3", cwd=sys.argv[1])
assert _warm_kernels.wait_until_ready(60)
forked, _ = start_new_kernel(kernel_name="python3", cwd=sys.argv[1])
print(json.dumps([cold.provisioner.pid, forked.provisioner.pid, *_warm_kernels.warm_python_pids()]), flush=True)
time.sleep(600)
"""


def test_when_the_jupyter_process_is_killed_its_kernels_and_its_warm_python_go_too() -> None:
    jupyter = subprocess.Popen([sys.executable, "-c", JUPYTER, NOTEBOOKS], stdout=subprocess.PIPE, text=True)
    try:
        started = [psutil.Process(pid) for pid in json.loads(jupyter.stdout.readline())]
    finally:
        jupyter.kill()
        jupyter.wait()
        jupyter.stdout.close()
    until(lambda look: _ended(started, look), tuple(p.pid for p in started), "the killed Jupyter's kernels' end")


def test_a_warm_python_that_cannot_import_what_it_is_given_is_not_started_again_and_kernels_start_as_usual(
    warm: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_warm_kernels, "PRELOADED", ("no_such_module_anywhere", *_warm_kernels.PRELOADED))
    env = {**os.environ, "LABKIT_TEST_CASE": "a warm Python that fails"}  # an environment of its own
    _, first = _report(env=env)
    failed = next(w for w in _warm_kernels._by_environment.values() if "LABKIT_TEST_CASE" in w.env)
    python = failed.kernels.process
    until(lambda look: _exited(python, look), python.pid, "the warm Python's end")
    assert python.returncode != 0
    _, second = _report(env=env)
    assert not isinstance(first, Forked) and not isinstance(second, Forked)
    assert next(w for w in _warm_kernels._by_environment.values() if "LABKIT_TEST_CASE" in w.env) is failed
