"""Real-browser fixtures: a private JupyterLab on 127.0.0.1, Debian's Chromium behind a network guard, memory probe."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / "screenshots"
SCRATCH = SHOTS / "saved-by-tests"  # the one folder a test may save notebooks in (ignored by git, like SHOTS)
LAB_PYTHON = Path(os.environ.get("LAB_PYTHON", REPO / ".venv" / "bin" / "python"))
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
KERNEL_START_S = 60
"""How long JupyterLab's server gives a kernel to start or restart and answer (jupyter_server's own default), times
`LABKIT_TIME_SCALE` and the machine's load: a kernel slower than that is presumed dead, and JupyterLab then asks the
learner to pick a kernel (a dialog the test does not answer) and Run All runs nothing."""
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class LabDeadline:
    """labkit's `Deadline` over the JupyterLab server's process tree (its kernels, their warm Pythons and servers), kept
    by the lab's Python (`lab_deadline.py`: this venv has no labkit), one deadline at a time."""

    def __init__(self, tree: int) -> None:
        self.keeper = subprocess.Popen(
            [str(LAB_PYTHON), "-m", "tests.browser.lab_deadline", str(tree)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _ask(self, line: str) -> dict[str, Any]:
        assert self.keeper.stdin is not None and self.keeper.stdout is not None
        self.keeper.stdin.write(line + "\n")
        self.keeper.stdin.flush()
        answer = self.keeper.stdout.readline()
        if not answer:
            raise RuntimeError(f"the lab's deadline keeper ended (exit status {self.keeper.wait()})")
        return json.loads(answer)

    def start(self, seconds: float) -> None:
        self._ask(f"start {seconds}")

    def passed(self) -> dict[str, Any] | None:
        """None while the deadline has not passed; then why it passed, and the state of each of the lab's processes."""
        answer = self._ask("passed")
        return answer if answer["passed"] else None

    def close(self) -> None:
        if self.keeper.stdin is not None:
            self.keeper.stdin.close()
        try:
            self.keeper.wait(10)
        except subprocess.TimeoutExpired:
            self.keeper.kill()
            self.keeper.wait()


@dataclass
class Lab:
    """A running JupyterLab: its address, its process, the folders it was given, where its log is kept after the
    session (one file per suite: `screenshots/jupyterlab_<suite>.log`), and the deadline over its processes."""

    url: str
    process: subprocess.Popen
    data: Path
    log: Path
    kept_log: Path
    deadline: LabDeadline


_RUNNING: list[Lab] = []
"""The session's JupyterLab, once started: what `until` waits on."""


@dataclass
class Guard:
    """Every request the browser made, and the ones aborted because they were not for the lab."""

    allowed_prefix: str
    seen: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    sockets: list[str] = field(default_factory=list)

    def only_local(self) -> bool:
        """Nothing blocked, and every request and WebSocket went to the lab on 127.0.0.1."""
        sockets = self.allowed_prefix.replace("http://", "ws://", 1)
        return (
            not self.blocked
            and all(u.startswith((self.allowed_prefix, "data:", "blob:")) for u in self.seen)
            and all(u.startswith(sockets) for u in self.sockets)
        )


def repo_writes(lab: Lab) -> list[str]:
    """The files the lab's server saved outside SCRATCH: a test must never write to the repo."""
    saved = re.findall(r"Saving file at (\S+)", lab.log.read_text())
    scratch = SCRATCH.relative_to(REPO).as_posix() + "/"
    return [path for path in saved if not path.lstrip("/").startswith(scratch)]


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Lab]:
    """JupyterLab on the repo with isolated Jupyter dirs, no token, the Binder overrides, and no scripted user."""
    if not LAB_PYTHON.exists():
        pytest.skip(f"{LAB_PYTHON} not found: run `make env` first")
    home = tmp_path_factory.mktemp("jupyter")
    dirs = {name: home / name for name in ("config", "data", "runtime", "settings", "workspaces", "app-settings")}
    for folder in dirs.values():
        folder.mkdir()
    shutil.copy(REPO / "binder" / "overrides.json", dirs["app-settings"] / "overrides.json")
    # Never write to the repo: no autosave (a run changes outputs and metadata), and nothing ever clicks Save.
    docmanager = dirs["settings"] / "@jupyterlab" / "docmanager-extension"
    docmanager.mkdir(parents=True)
    (docmanager / "plugin.jupyterlab-settings").write_text(json.dumps({"autosave": False}))
    # Nobody scripted: a kernel that inherits this pytest's PYTEST_CURRENT_TEST takes itself for nbval's (07's approval
    # then answered itself, and the browser test had no approval to find).
    unscripted = ("LABKIT_SCRIPTED_USER", "PYTEST_CURRENT_TEST", "MPLBACKEND", "LABKIT_DATA_DIR")
    env = {k: v for k, v in os.environ.items() if k not in unscripted}
    env.update(
        JUPYTER_CONFIG_DIR=str(dirs["config"]),
        JUPYTER_DATA_DIR=str(dirs["data"]),
        JUPYTER_RUNTIME_DIR=str(dirs["runtime"]),
        JUPYTERLAB_SETTINGS_DIR=str(dirs["settings"]),
        JUPYTERLAB_WORKSPACES_DIR=str(dirs["workspaces"]),
        LABKIT_DATA_DIR=str(home / "labkit-data"),
        # matplotlib's font list of its own: one cached before .ci/chromium.sh installed the CJK fonts lacks them
        MPLCONFIGDIR=str(home / "matplotlib"),
    )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = home / "jupyterlab.log"
    command = [
        str(LAB_PYTHON),
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.token=",
        "--ServerApp.password=",
        "--ServerApp.disable_check_xsrf=True",  # test only, 127.0.0.1
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp: the cells' state, drawn or not (as Galata reads it)
        f"--ServerApp.root_dir={REPO}",
        f"--LabApp.app_settings_dir={dirs['app-settings']}",
        f"--MappingKernelManager.kernel_info_timeout={scaled(KERNEL_START_S) * busy_factor():.0f}",
    ]
    with log.open("w") as out:
        process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    kept_log = SHOTS / f"jupyterlab_{_suite(request.session)}.log"
    running = Lab(url, process, home / "labkit-data", log, kept_log, LabDeadline(process.pid))
    _RUNNING.append(running)
    try:
        until(None, "JupyterLab to answer at /api/status", lambda: _started(process, url, log))
        yield running
    finally:
        _RUNNING.remove(running)
        running.deadline.close()
        _stop(process, url)
        SHOTS.mkdir(exist_ok=True)
        shutil.copy(log, running.kept_log)  # what the server said (a kernel that failed to start), kept with shots


def kept_log() -> str:
    """Where the session's JupyterLab log is kept once it ends, for a message to name."""
    return _RUNNING[-1].kept_log.relative_to(REPO).as_posix()


def _suite(session: pytest.Session) -> str:
    """The suite's name for its files: its one test file's (`classroom` for test_classroom.py), or `browser`."""
    files = {item.path.stem.removeprefix("test_") for item in session.items}
    return files.pop() if len(files) == 1 else "browser"


def _started(process: subprocess.Popen, url: str, log: Path) -> bool:
    if process.poll() is not None:
        pytest.fail(
            f"JupyterLab ended (exit status {process.returncode}) before it answered:\n{log.read_text()[-3000:]}"
        )
    return _answers(f"{url}/api/status")


def scaled(seconds: float) -> float:
    """`seconds` times `LABKIT_TIME_SCALE`, read by the lab's one reader of it (this venv does not have labkit)."""
    script = str(REPO / "labkit" / "_time_limits.py")
    limit = subprocess.run([sys.executable, script, str(seconds)], capture_output=True, check=True, text=True)
    return float(limit.stdout)


def busy_factor() -> float:
    """How many programs wait for each CPU now (the 1-minute load over the CPUs), at least 1: a limit meant for a quiet
    machine is given that many times longer on a crowded one."""
    return max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))


WAIT_S = scaled(120)
"""How long a wait for the lab (a kernel ready, a lesson opened, its cells drawn, a form drawn or gone, a run's next
step) lasts on a quiet machine: labkit's `Deadline` over the JupyterLab server's processes moves it on by the time they
waited for a CPU while they worked (up to ten times it), so a busy machine gets the time it kept from them, and a lab
whose processes neither run nor wait for a CPU (a stopped kernel, a blocked server) is named as stalled once it passed.
Also Playwright's own limit for the page's own work (a click, a menu): `LABKIT_TIME_SCALE` scales both."""
PEEK_MS = 1_000
"""How long one look of `until` waits inside Playwright (an `expect(..., timeout=PEEK_MS)`) before the deadline is
asked again."""
_POLL_MS = 300
_VERDICTS = {
    "hung": "hung (the lab's processes were idle at the end: nothing in the lab was working toward it)",
    "busy": "busy (the lab's processes waited for a CPU)",
    "": "its processes kept working",
}
_HALTED = ("stopped", "tracing-stop", "zombie", "dead")
"""Process states (psutil's) in which a process of the lab can do no work: named first when a wait fails."""

T = TypeVar("T")


def until(page: Any, what: str | Callable[[], str], condition: Callable[[], T | None]) -> T:
    """The first value of `condition()` that is neither None nor false (a Playwright `expect(..., timeout=PEEK_MS)`
    inside it that does not hold yet counts as not yet), waited for as long as the session's JupyterLab works: by
    labkit's `Deadline` over its processes (`WAIT_S`, moved on by the time they waited for a CPU). When it passes, the
    test fails naming `what` it waited for (a callable: said as of then), why the deadline passed ("hung": the lab's
    processes neither ran nor waited for a CPU), and each of the lab's processes with its state (a stopped kernel shows
    as "stopped"). `page` waits between looks (its events are served meanwhile); None before there is a page."""
    deadline = _RUNNING[-1].deadline
    deadline.start(WAIT_S)
    not_yet: AssertionError | None = None
    while True:
        try:
            if (value := condition()) is not None and value is not False:
                return value
        except AssertionError as error:  # an expectation that does not hold yet
            not_yet = error
        if (verdict := deadline.passed()) is not None:
            waited = what() if callable(what) else what
            processes = "\n".join(
                f"  pid {p['pid']} {p['state']}, {p['cpu_s']} CPU-s: {p['command']}" for p in verdict["processes"]
            )
            halted = [f"pid {p['pid']} ({p['command'][:80]})" for p in verdict["processes"] if p["state"] in _HALTED]
            pytest.fail(
                f"waited {verdict['waited_s']} s for {waited} (limit {WAIT_S:g} s, moved on while the lab's processes "
                f"waited for a CPU); the lab's deadline says: {_VERDICTS.get(verdict['cause'], verdict['cause'])}. "
                + (f"Stopped or dead: {'; '.join(halted)}. " if halted else "")
                + f"{verdict['note']}\nThe lab's processes now:\n{processes}"
                + (f"\nThe last look: {not_yet}" if not_yet is not None else ""),
                pytrace=False,
            )
        if page is None:
            time.sleep(_POLL_MS / 1000)
        else:
            page.wait_for_timeout(_POLL_MS)


@pytest.fixture
def guard(lab: Lab) -> Guard:
    return Guard(lab.url + "/")


@contextmanager
def chromium_tab(guard: Guard, profile: Path) -> Iterator[Any]:
    """A tab of a fresh Chromium profile whose every request that is not for `guard`'s prefix is aborted and logged."""
    sync_api = pytest.importorskip("playwright.sync_api")
    # A busy machine answers late: every expect and every locator action waits as long as a stalled run would (the
    # lab's time-limit scale), never Playwright's 5 s (the file browser took longer to list the repo at load 12).
    sync_api.expect.set_options(timeout=WAIT_S * 1000)
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: `apt-get install chromium` (see .ci/browser.sh)")
    with sync_api.sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=str(CHROMIUM),
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 1000},
        )

        def route(route) -> None:
            target = route.request.url
            guard.seen.append(target)
            if target.startswith((guard.allowed_prefix, "data:", "blob:")):
                route.continue_()
            else:
                guard.blocked.append(target)
                route.abort()

        context.route("**/*", route)
        context.set_default_timeout(WAIT_S * 1000)  # every tab, also one a test opens again
        tab = context.pages[0] if context.pages else context.new_page()
        tab.on("websocket", lambda ws: guard.sockets.append(ws.url))  # not routable: logged and checked instead
        try:
            yield tab
        finally:
            context.close()


@pytest.fixture
def page(lab: Lab, guard: Guard, tmp_path: Path, request: pytest.FixtureRequest):
    """A fresh Chromium profile whose every request that is not for the lab is aborted and logged."""
    with chromium_tab(guard, tmp_path / "profile") as tab:
        yield tab
        shown = [open_tab for open_tab in tab.context.pages if not open_tab.is_closed()]  # a test may close its tab
        if request.node.stash.get(_FAILED, False) and shown:
            SHOTS.mkdir(exist_ok=True)
            shown[-1].screenshot(path=str(SHOTS / f"FAILED_{request.node.name}.png"))
    _delete_kernels(lab.url)  # each test's kernel (and the MCP servers it started) ends with the test
    # and so do its open tabs: JupyterLab's workspace is the server's, and a test that found the last test's lessons
    # open started a kernel for each at once (on a busy machine one failed to start: JupyterLab's Select Kernel dialog)
    _forget_workspaces(lab.url)


@pytest.fixture
def bare_page(tmp_path: Path) -> Iterator[Any]:
    """A Chromium tab with no JupyterLab behind it (no request leaves it): a page the test writes itself."""
    with chromium_tab(Guard("about:"), tmp_path / "profile") as tab:
        yield tab


@pytest.fixture
def memory(lab: Lab) -> Iterator[MemoryProbe]:
    """Samples the resident memory of the lab's kernels and everything they start, five times a second."""
    probe = MemoryProbe(lab.process.pid)
    probe.start()
    yield probe
    probe.stop()


class MemoryProbe(threading.Thread):
    """Peak RSS (and PSS) summed over the kernel processes of a Jupyter server and all their descendants."""

    def __init__(self, server_pid: int, every: float = 0.2) -> None:
        super().__init__(daemon=True)
        self.server_pid, self.every = server_pid, every
        self.peak_rss = self.peak_pss = self.peak_processes = 0
        self.peak_server_rss = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            pids = [pid for kernel in _children(self.server_pid) for pid in _descendants(kernel)]
            rss = sum(_kib(pid, "status", "VmRSS:") for pid in pids)
            if rss > self.peak_rss:
                self.peak_rss, self.peak_processes = rss, len(pids)
            self.peak_pss = max(self.peak_pss, sum(_kib(pid, "smaps_rollup", "Pss:") for pid in pids))
            self.peak_server_rss = max(self.peak_server_rss, _kib(self.server_pid, "status", "VmRSS:"))
            self._done.wait(self.every)

    def stop(self) -> None:
        self._done.set()
        self.join(5)

    def report(self) -> dict[str, float]:
        return {
            "kernel_tree_peak_rss_mb": round(self.peak_rss / 1024, 1),
            "kernel_tree_peak_pss_mb": round(self.peak_pss / 1024, 1),
            "processes_at_peak": self.peak_processes,
            "jupyter_server_peak_rss_mb": round(self.peak_server_rss / 1024, 1),
        }


_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_FAILED] = True
    return report


def _children(pid: int) -> list[int]:
    """The processes `pid`'s threads started, from /proc/<pid>/task/*/children: the lab's tree only, five times a second
    (reading every process's stat on the machine cost 5 ms of CPU a sample, more on a busy CI machine)."""
    found: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            found += [int(child) for child in (task / "children").read_text().split()]
    except OSError:  # it ended meanwhile
        pass
    return found


def _descendants(pid: int) -> list[int]:
    found = [pid]
    for child in _children(pid):
        found += _descendants(child)
    return found


def _kib(pid: int, name: str, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _answers(url: str, method: str = "GET") -> bool:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method=method), timeout=5) as response:
            return response.status < 400
    except OSError:
        return False


def _delete_kernels(url: str) -> None:
    try:
        with urllib.request.urlopen(f"{url}/api/kernels", timeout=5) as response:
            kernels = json.load(response)
    except (OSError, ValueError):
        return
    for kernel in kernels:
        _answers(f"{url}/api/kernels/{kernel['id']}", method="DELETE")


def _forget_workspaces(url: str) -> None:
    try:
        with urllib.request.urlopen(f"{url}/lab/api/workspaces", timeout=5) as response:
            names = json.load(response)["workspaces"]["ids"]
    except (OSError, ValueError, KeyError):
        return
    for name in names:
        _answers(f"{url}/lab/api/workspaces/{name}", method="DELETE")


def _stop(process: subprocess.Popen, url: str) -> None:
    """Delete the kernels, ask the server to shut down, and kill its process group only as a last resort."""
    try:
        _delete_kernels(url)
        _answers(f"{url}/api/shutdown", method="POST")
        process.wait(20)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
