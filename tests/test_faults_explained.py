"""Issue 36's faults against real processes: the cause reaches the learner and not the model, a busy machine is given
time and named, and an environment that is not ours (a proxy) changes nothing. Cases: `replays/failure_cases.py`."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
from jupyter_client.manager import start_new_kernel

from labkit import Host, ServerSpec, Trace, _warm_kernels
from labkit._time_limits import TIME_SCALE_ENV
from labkit.host import ServerStartError
from labkit.host._server_output import STRAY_STDOUT_FIX
from labkit.processes import HeldPort
from labkit.processes._spec import REPO_ROOT
from labkit.trace import Kind
from replays import failure_cases as cases
from replays import fault_cases
from replays.fault_cases import LIMIT, command_line
from tests.kernel_helpers import printed, run_cell

needs_taskset = pytest.mark.skipif(shutil.which("taskset") is None, reason="taskset (util-linux) is not installed")


async def test_a_tool_that_raises_shows_its_cause_to_the_learner_and_only_the_sdks_words_to_the_model() -> None:
    with anyio.fail_after(LIMIT):
        replay = await cases.tool_raises()
    [result] = replay.results
    assert result.is_error and "disk full" not in result.text
    [shown] = replay.trace.of_kind(Kind.SERVER_STDERR)
    assert shown.payload["exceptions"][0] == "RuntimeError: disk full at /srv/reports"
    assert shown.ref == "host-call-1" and shown.meta["server"] == "faulty"
    sent_to_model = [e for e in replay.trace if e.kind == Kind.HOST_WRITEBACK]
    assert all("disk full" not in json.dumps(e.payload) for e in sent_to_model)


async def test_a_stray_print_on_stdout_is_named_once_with_the_fix_and_the_server_still_works() -> None:
    with anyio.fail_after(LIMIT):
        replay = await cases.stray_print()
    [result] = replay.results
    assert not result.is_error
    [note] = [e for e in replay.trace.of_kind(Kind.HOST_NOTE) if e.payload and "fix" in e.payload]
    assert note.payload == {"line": "debug: starting", "fix": STRAY_STDOUT_FIX} and note.meta["server"] == "stray"


@pytest.mark.parametrize("every", ["http://127.0.0.1:9", "socks5://127.0.0.1:9"])
async def test_the_lab_server_over_http_is_reached_directly_when_a_proxy_is_set(every: str) -> None:
    """A SOCKS `ALL_PROXY` too: loopback traffic never reads the proxy variables (httpx cannot even build a SOCKS
    proxy without a package the lab does not install)."""
    with anyio.fail_after(LIMIT):
        replay = await cases.behind_a_proxy("http", every)
    assert replay.error is None, replay.error
    [result] = replay.results
    assert not result.is_error and json.loads(result.text)["total"] > 0


async def test_a_server_given_a_proxy_is_told_not_to_use_it_for_loopback() -> None:
    with anyio.fail_after(LIMIT):
        replay = await cases.proxy_variables_passed_on()
    [result] = replay.results
    no_proxy = json.loads(result.text)["value"].split(",")
    assert no_proxy[0] == "intranet.example" and {"127.0.0.1", "localhost", "::1"} <= set(no_proxy)


@pytest.mark.parametrize("damage, cause", [("corrupt", "is damaged"), ("locked", "is locked by another program")])
async def test_a_damaged_store_is_a_tool_error_with_a_plain_cause(damage: str, cause: str, tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        replay = await cases.damaged_store(tmp_path / "data", damage)
    [result] = replay.results
    # A crash would read only "Error executing tool query_errors"; a ToolError's words follow it.
    assert result.is_error and f"{tmp_path / 'data' / 'logs.sqlite'} {cause}" in result.text


async def test_a_learners_file_that_shadows_an_import_fails_warm_as_it_fails_cold(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT):
        warm = await cases.learners_file_shadows_an_import(tmp_path / "warm", warm=True)
        cold = await cases.learners_file_shadows_an_import(tmp_path / "cold", warm=False)
    assert isinstance(cold.error, ServerStartError) and "'mcp' is not a package" in cold.error.stderr
    assert isinstance(warm.error, ServerStartError), warm.results
    assert warm.error.stderr.splitlines()[-1] == cold.error.stderr.splitlines()[-1]


async def test_a_learners_file_named_like_a_module_the_standard_library_imports_is_named_in_the_error(
    tmp_path: Path,
) -> None:
    """`selectors.py`: the error is raised far from it (a circular import in importlib.metadata), and the frame that
    names the learner's file is above the last lines of the traceback."""
    with anyio.fail_after(LIMIT):
        replay = await cases.learners_file_shadows_an_import(tmp_path, warm=False, name="selectors.py")
    assert isinstance(replay.error, ServerStartError), replay.results
    assert str(tmp_path / "selectors.py") in replay.error.stderr, replay.error.stderr


needs_private_mounts = pytest.mark.skipif(not cases.can_mount_privately(), reason="no private mount namespaces here")


@needs_private_mounts
def test_a_read_only_checkout_is_named_up_front_with_the_setting_to_use() -> None:
    replay = cases.read_only_checkout(None)
    assert replay.returncode == 2 and "Traceback" not in replay.stderr
    [message] = replay.stderr.strip().splitlines()
    assert str(REPO_ROOT / "data") in message and "LABKIT_DATA_DIR=" in message


@needs_private_mounts
def test_a_read_only_checkout_with_a_data_folder_elsewhere_prints_what_it_computed(tmp_path: Path) -> None:
    replay = cases.read_only_checkout(tmp_path / "data")
    assert replay.returncode == 0 and "Traceback" not in replay.stderr
    assert Kind.HOST_DELIVER in replay.stdout and "--out" in replay.stderr


@needs_private_mounts
def test_a_store_on_a_full_disk_is_a_tool_error_naming_the_full_disk(tmp_path: Path) -> None:
    """SQLite's own "database or disk is full", met on a real filesystem that fills up while the store is built."""
    replay = cases.disk_full(tmp_path / "data")
    assert replay.error is None, replay.error
    [result] = replay.results
    assert result.is_error and f"{tmp_path / 'data'} is full" in result.text


@needs_private_mounts
def test_a_chart_whose_labels_no_font_can_draw_is_a_tool_error_and_nothing_is_saved(tmp_path: Path) -> None:
    """On a machine without a CJK font the Chinese chart is refused with the font to install; the English one, whose
    characters the fonts matplotlib ships can draw, is drawn and saved there as anywhere."""
    from matplotlib import get_cachedir

    # The user's font list, which every other chart on this machine reads (it is written on first use if missing).
    users_font_lists = {path: path.read_bytes() for path in Path(get_cachedir()).glob("fontlist-*.json")}
    chinese = cases.chart_without_a_cjk_font(tmp_path / "zh", "zh_CN")
    english = cases.chart_without_a_cjk_font(tmp_path / "en", "en")
    assert chinese.error is None and english.error is None, (chinese.error, english.error)
    # Left as it was: a font list built without the system fonts, written there, broke every Chinese chart after it.
    assert {path: path.read_bytes() for path in users_font_lists} == users_font_lists
    [refused], [drawn] = chinese.results, english.results
    assert refused.is_error and "fonts-noto-cjk" in refused.text and "LABKIT_LANG=en" in refused.text
    assert not list((tmp_path / "zh" / "data").rglob("*.png"))
    assert not drawn.is_error and len(list((tmp_path / "en" / "data").rglob("*.png"))) == 1


@needs_private_mounts
def test_the_chinese_chart_refused_for_want_of_a_font_shows_the_servers_message_in_lesson_04(tmp_path: Path) -> None:
    """Notebook 04 read the result's structuredContent, which a refused chart has none of: the learner got a bare
    KeyError instead of the server's message naming the font to install."""
    lesson = REPO_ROOT / "zh-CN" / "notebooks" / "04_elicitation.ipynb"
    cell = next(i for i, c in enumerate(json.loads(lesson.read_text())["cells"]) if c.get("id") == "cell-022")
    replay = cases.lesson_without_a_cjk_font(tmp_path, lesson, cell)
    assert replay.error is None, replay.error
    outputs = json.loads(replay.stdout.splitlines()[-1])
    assert not [o for o in outputs if o["output_type"] == "error"], outputs
    assert any("fonts-noto-cjk" in "".join(o.get("text", "")) for o in outputs), outputs


@needs_taskset
def test_a_start_on_a_crowded_cpu_is_given_the_time_it_waited_for_the_cpu() -> None:
    """Its limit is twice the CPU time it needs and it gets a quarter of a CPU: it is done within its limit only if the
    time it waited for the CPU is not counted against it (every step of a start: the opening, then the listing)."""
    replay = cases.crowded_start()
    assert replay.error is None, replay.error


@needs_taskset
def test_warm_pythons_starting_on_a_crowded_cpu_are_given_the_time_they_waited_for_the_cpu() -> None:
    """Their limit is the CPU time they need to be ready and they share one CPU with a kernel's start and three
    spinning programs: they are ready within it only if the time they waited for the CPU is not counted against it."""
    replay = cases.crowded_warm_start()
    assert replay.error is None, replay.error


@needs_taskset
def test_a_server_that_never_answers_on_a_crowded_cpu_is_named_as_not_answering_not_the_busy_machine() -> None:
    """The host shares its one CPU with three spinning programs, and its server sits in a read: it uses no CPU time,
    so the busy machine does not explain it and a higher time scale would not help."""
    error = cases.busy_cpu("silent", 2).error
    assert error is not None and "not answering" in str(error), error
    assert "machine is busy" not in str(error) and f"{TIME_SCALE_ENV}=" not in str(error)


@needs_taskset
def test_a_tool_hung_in_a_sleep_on_a_crowded_cpu_is_named_as_hung_not_the_busy_machine() -> None:
    """Its server sits in a sleep while the host shares its one CPU with three spinning programs: the server neither
    runs nor waits for the CPU, so the crowded CPU does not explain it."""
    replay = cases.busy_cpu_call("wait_forever", {}, 2)
    assert replay.error is None, replay.error
    [result] = replay.results
    assert result.is_error and json.loads(replay.stdout)["causes"] == ["hung"], replay.stdout


def test_a_tool_hung_in_a_sleep_is_named_as_hung_however_hard_the_host_works_meanwhile() -> None:
    """Whether the server works is judged from its own processes: the host's thread, computing all along (and
    running the judgement itself), is not the server working."""
    replay = cases.hung_tool_while_the_host_computes()
    assert replay.error is None, replay.error
    [result] = replay.results
    assert result.is_error and json.loads(replay.stdout)["causes"] == ["hung"], replay.stdout


def test_a_tool_hung_in_a_sleep_is_named_as_hung_however_hard_another_process_of_the_host_works() -> None:
    """Whether the called server works is judged from its own process tree: another of the host's processes (a warm
    Python, another server), computing all along, is not that server working."""
    replay = cases.hung_tool_while_another_process_of_the_host_computes()
    assert replay.error is None, replay.error
    [result] = replay.results
    assert result.is_error and json.loads(replay.stdout)["causes"] == ["hung"], replay.stdout


@needs_taskset
def test_a_tool_spinning_in_a_loop_on_a_crowded_cpu_is_named_as_computing_not_the_busy_machine() -> None:
    """Its server runs on the CPU, or waits for it, the whole call while the host shares that CPU with three spinning
    programs: the limit counts its own CPU time, and the note says it was computing all along, not that the machine
    is busy (more time would never end a loop)."""
    replay = cases.busy_cpu_call("spin", {}, 2)
    assert replay.error is None, replay.error
    [result] = replay.results
    outcome = json.loads(replay.stdout)
    assert result.is_error and outcome["causes"] == ["computing"], replay.stdout
    assert "machine is busy" not in outcome["notes"][0], outcome["notes"]


@needs_taskset
def test_a_tool_that_works_within_its_cpu_limit_on_a_crowded_cpu_is_waited_for() -> None:
    """It needs 2 s of CPU time under a 3 s limit, and gets a quarter of a CPU: it finishes if the time it waited for
    the CPU while it worked is not counted against it."""
    replay = cases.busy_cpu_call("crunch", {"cpu_seconds": 2}, 3)
    assert replay.error is None, replay.error
    [result] = replay.results
    assert not result.is_error and "crunched" in result.text, replay.stdout


async def test_a_slow_start_is_limited_by_the_hosts_start_limit_alone() -> None:
    """Not by the SDK's own `server/discover` limit: the probe is answered late, and the start reads as on a fast
    machine (before, the old handshake followed and was refused with an error in the trace)."""
    with anyio.fail_after(LIMIT):
        replay = await cases.slower_than_the_sdks_probe()
    assert replay.error is None, replay.error
    [result] = replay.results
    assert not result.is_error
    requests = [e.meta.get("method") for e in replay.trace.of_kind(Kind.JSONRPC_REQUEST) if e.src == "client"]
    assert requests.count("server/discover") == 1 and "initialize" not in requests
    assert not replay.trace.of_kind(Kind.JSONRPC_ERROR)


async def test_an_http_server_outlives_the_thread_that_started_it(tmp_path: Path) -> None:
    """The host starts its HTTP servers in anyio's worker threads, and anyio retires a thread after 10 s without work:
    the server (its supervisor told to stop by that thread's end) must not end with it."""
    with anyio.fail_after(LIMIT):
        replay = await cases.http_server_after_its_starting_thread_ended(tmp_path)
    assert replay.error is None, replay.error
    [result] = replay.results
    assert not result.is_error, result.text
    assert not replay.trace.of_kind(Kind.HOST_RESTART)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_server_that_exits_mid_call_tells_the_learner_its_exit_status(transport: str) -> None:
    with anyio.fail_after(LIMIT):
        replay = await fault_cases.crash_mid_call(transport)
    first = replay.results[0]
    assert first.is_error and "(exit status 3)" in first.text, first.text


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_an_http_server_that_ended_is_named_in_every_http_error_and_nothing_else_reaches_the_learner(era: str) -> None:
    """The host answers on the port of an HTTP server that ended (HTTP 503, a JSON-RPC error saying so) until it
    starts it again. Each such answer in the trace said only "HTTP 503 to GET", and the SDK's closing of the dead
    session printed "Session termination failed: 503" under the cell."""
    replay = cases.http_server_killed_between_calls(era)
    assert replay.error is None, replay.error
    [result], outcome = replay.results, json.loads(replay.stdout)
    assert result.is_error and "restarted" in result.text and outcome["then"] is False, outcome
    assert outcome["failed"], "the ended server's answers are in the trace"
    for failed in outcome["failed"]:
        assert failed["body"]["error"]["message"] in failed["summary"], failed
    assert replay.stderr == "", replay.stderr


async def test_a_server_killed_by_a_signal_mid_call_names_the_signal() -> None:
    with anyio.fail_after(LIMIT):
        replay = await cases.killed_by_a_signal_mid_call()
    [result] = replay.results
    assert result.is_error and f"SIGKILL ({int(signal.SIGKILL)})" in result.text, result.text


async def test_a_url_whose_server_has_ended_is_one_start_error_naming_it() -> None:
    """Outside test #20's bare 'unhandled errors in a TaskGroup': the URL of a lab server that ended, its port held
    and answering that it ended."""
    held = HeldPort()
    held.answer_ended("logs", 3)
    try:
        with anyio.fail_after(LIMIT), pytest.raises(ServerStartError) as raised:
            async with Host(Trace(), [ServerSpec("logs", url=f"http://127.0.0.1:{held.port}/mcp")]):
                pass
    finally:
        held.close()
    assert raised.value.server == "logs" and "has ended (exit status 3)" in str(raised.value), raised.value


async def test_every_limit_is_scaled_by_the_one_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TIME_SCALE_ENV, "2.5")
    with anyio.fail_after(LIMIT):
        error = (await cases.silent_start_under(limit=1)).error
    assert error is not None and "within 2.5 s" in str(error)


_A_ZOMBIE_AND_TWO_SERVERS = """
import subprocess, sys, time
exited = subprocess.Popen([sys.executable, "-c", "pass"])  # never waited for: a zombie while this process lives
servers = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", f"servers.fake{n}"]) for n in (1, 2)]
exited.wait  # kept referenced, never called
time.sleep(60)
"""


def test_a_child_that_exits_while_the_clis_servers_are_looked_for_is_skipped() -> None:
    """The race of a fresh-clone CI run: reading the command line of a child that had just exited (a zombie)."""
    parent = subprocess.Popen([sys.executable, "-c", _A_ZOMBIE_AND_TWO_SERVERS])
    try:
        deadline = time.monotonic() + LIMIT
        while not any(p.status() == psutil.STATUS_ZOMBIE for p in psutil.Process(parent.pid).children()):
            assert time.monotonic() < deadline, "the child did not exit"
            time.sleep(0.05)
        found = fault_cases._started_servers(parent)
        assert sorted(command_line(p)[-1] for p in found) == ["servers.fake1", "servers.fake2"]
    finally:
        for process in psutil.Process(parent.pid).children():
            process.kill()
        parent.kill()
        parent.wait()


def _stop_jupyters_warm_pythons() -> None:
    for warm in _warm_kernels._by_environment.values():
        warm.kernels.stop()
        warm.servers.stop()
    _warm_kernels._by_environment.clear()


def test_kernels_forked_by_a_warm_python_outlive_it_with_their_variables() -> None:
    """Killing the warm Python that forks kernels (the OOM killer, a `kill`) leaves its kernels running, still
    Jupyter's: adopted by its keeper, not by init (which a kernel takes for its parent's death)."""
    _stop_jupyters_warm_pythons()
    kernels = []
    try:
        kernels.append(start_new_kernel(kernel_name="python3", cwd=str(REPO_ROOT / "notebooks")))  # starts them
        assert _warm_kernels.wait_until_ready(LIMIT)
        kernels += [start_new_kernel(kernel_name="python3", cwd=str(REPO_ROOT / "notebooks")) for _ in range(2)]
        warm = next(iter(_warm_kernels._by_environment.values())).kernels
        assert [psutil.Process(m.provisioner.pid).ppid() for m, _ in kernels[1:]] == [warm.pid, warm.pid]
        for n, (manager, client) in enumerate(kernels):
            printed(manager, client, f"kept = {n}")
        os.kill(warm.pid, signal.SIGKILL)
        time.sleep(3)  # ipykernel's parent poller looks every second
        for n, (manager, client) in enumerate(kernels):
            assert manager.is_alive() and printed(manager, client, "print(kept)") == f"{n}\n"
    finally:
        for manager, client in kernels:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
        _stop_jupyters_warm_pythons()


_FAILS_TO_START = """
import sys
from labkit import Host, ServerSpec, Trace
crash = "import sys; print('PELICAN-77: disk controller on fire', file=sys.stderr); sys.exit(4)"
async with Host(Trace(), [ServerSpec("bad", command=sys.executable, args=["-c", crash])]) as host:
    pass
"""
_FAILS_TO_START_IN_TASK_GROUPS = """
import anyio, sys
from labkit import Host, ServerSpec, Trace
crash = "import sys; print('PELICAN-77: disk controller on fire', file=sys.stderr); sys.exit(4)"
async def start():
    async with Host(Trace(), [ServerSpec("bad", command=sys.executable, args=["-c", crash])]) as host:
        pass
async def in_groups(depth):
    async with anyio.create_task_group() as group:
        group.start_soon(in_groups, depth - 1) if depth > 1 else group.start_soon(start)
await in_groups({depth})
"""
_A_LONG_CALL = """
from labkit import Host, ServerSpec, Trace
from labkit.host import GatePolicy
async with Host(Trace(), [ServerSpec("faulty")], policy=GatePolicy(auto_approve=frozenset({"sleep_for"}))) as host:
    print("calling", flush=True)
    await host.call("sleep_for", {"seconds": 600})
"""


_A_BARE_CLIENT_CALL = """
import os, sys, psutil
from mcp import Client
from labkit import ServerSpec, Trace, stdio_transport
SERVER = '''
import time
from mcp.server.mcpserver import MCPServer
mcp = MCPServer("stuck")

@mcp.tool()
def never() -> str:
    while True:
        time.sleep(1)

mcp.run()
'''
stuck = ServerSpec("stuck", command=sys.executable, args=["-c", SERVER])
async with Client(stdio_transport(stuck, Trace())) as client:
    print("calling", flush=True)
    await client.call_tool("never", {})
"""
_LEFT_BEHIND = """
def _session(process):
    try:
        return os.getsid(process.pid)
    except OSError:
        return None
ours = [p for p in psutil.process_iter(["cmdline"]) if _session(p) == os.getsid(0)]
print([p.pid for p in ours if "stuck" in str(p.info["cmdline"])])
"""


def test_an_interrupt_ends_a_bare_sdk_client_call_that_never_returns_in_one_line_with_nothing_left() -> None:
    """Notebook 08's first client (the SDK's `Client` over `stdio_transport`) has no limit: only an interrupt ends a
    call that never returns. ipykernel cancels the cell without waking the loop it awaits on, so before, the cancel
    never landed and two interrupts left the cell running."""
    outputs = _cell_outputs(_A_BARE_CLIENT_CALL, interrupt_after="calling", after=_LEFT_BEHIND)
    [error] = [o for o in outputs if o["type"] == "error"]
    [shown] = error["traceback"]
    assert "Interrupted" in shown and "stuck" in shown, shown
    assert outputs[-1] == {"type": "after", "text": "[]\n"}, outputs[-1]


def _cell_outputs(code: str, interrupt_after: str | None = None, after: str | None = None) -> list[dict[str, Any]]:
    """Run `code` in a fresh lab kernel and return its outputs (interrupting the kernel once `interrupt_after` is
    printed); the kernel still answers afterwards, and what `after` prints there is the last output."""
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(REPO_ROOT / "notebooks"))
    outputs: list[dict[str, Any]] = []

    def kept(message: dict[str, Any]) -> None:
        outputs.append({"type": message["msg_type"], **message["content"]})
        if interrupt_after and message["msg_type"] == "stream" and interrupt_after in message["content"]["text"]:
            time.sleep(1)  # into the call
            manager.interrupt_kernel()

    try:
        run_cell(manager, client, code, kept)
        assert printed(manager, client, "print(1 + 1)") == "2\n"
        if after is not None:
            outputs.append({"type": "after", "text": printed(manager, client, after)})
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return outputs


def test_a_start_error_in_a_notebook_is_its_message_not_the_labs_frames() -> None:
    """Outside test #19: IPython failed to draw the chained exception groups under the error and printed about a
    hundred lines of them on stderr instead, the ServerStartError at their very end."""
    outputs = _cell_outputs(_FAILS_TO_START)
    [error] = [o for o in outputs if o["type"] == "error"]
    assert error["ename"] == "ServerStartError" and "PELICAN-77" in error["evalue"]
    shown = "\n".join(error["traceback"])
    assert "PELICAN-77" in shown and "labkit/host" not in shown and "Exception Group" not in shown
    assert not [o for o in outputs if o["type"] == "stream" and o["name"] == "stderr"], outputs


@pytest.mark.parametrize("depth", [1, 2])
def test_a_lab_error_in_task_groups_in_a_notebook_is_its_message_and_how_to_see_the_whole_traceback(depth: int) -> None:
    """anyio's task groups wrap what a task raises in an exception group (one per group): the learner still reads
    the error's message alone, and how to see the rest; asked for it (`%xmode Verbose`), the rest is shown."""
    outputs = _cell_outputs(_FAILS_TO_START_IN_TASK_GROUPS.format(depth=depth))
    [error] = [o for o in outputs if o["type"] == "error"]
    first, *rest = error["traceback"]
    assert "ServerStartError" in first and "PELICAN-77" in first, error["traceback"]
    assert [line for line in rest if "%xmode Verbose" in line] == rest != [], rest
    assert not [o for o in outputs if o["type"] == "stream" and o["name"] == "stderr"], outputs
    verbose = _cell_outputs("%xmode Verbose\n" + _FAILS_TO_START_IN_TASK_GROUPS.format(depth=depth))
    [whole] = [o for o in verbose if o["type"] == "error"]
    assert any("in_groups" in line for line in whole["traceback"]), whole["traceback"]


_ANOTHER_ERROR_IN_A_TASK_GROUP = """
import anyio, labkit
async def fails():
    raise ValueError("PELICAN-78: not a lab error")
async with anyio.create_task_group() as group:
    group.start_soon(fails)
"""


def test_another_error_in_a_task_group_in_a_notebook_is_shown_as_python_shows_it_and_the_cell_ends() -> None:
    """IPython could not draw the exception group and ipykernel then never answered the cell (it read a traceback
    IPython had not stored): the cell stayed [*] for good."""
    outputs = _cell_outputs(_ANOTHER_ERROR_IN_A_TASK_GROUP)
    [error] = [o for o in outputs if o["type"] == "error"]
    shown = "\n".join(error["traceback"])
    assert "ValueError: PELICAN-78" in shown and "fails" in shown, shown


def test_an_interrupted_call_in_a_notebook_ends_in_one_line_naming_the_call() -> None:
    outputs = _cell_outputs(_A_LONG_CALL, interrupt_after="calling")
    [error] = [o for o in outputs if o["type"] == "error"]
    [shown] = error["traceback"]
    assert "sleep_for" in shown and "faulty" in shown, shown
