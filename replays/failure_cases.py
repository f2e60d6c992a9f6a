"""The fault cases of issue 36, each replayed against real processes: a cause the SDK withholds, a busy machine, an
environment that is not ours. `tests/test_faults_explained.py` asserts on them, `python -m benchmarks --only faults`
tabulates them beside those of `replays/fault_cases.py`. Nothing here asserts or times anything.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anyio
import psutil

from labkit._time_limits import scaled
from labkit._warm import WARM_START_ENV
from labkit.host import GatePolicy, ServerSpec, ToolResult, http_server
from replays.fault_cases import REPO, SILENT, Replay, _calls, command_line

__all__ = ["CASES", "STRAY_PRINT", "busy_cpu", "busy_cpu_call", "crowded_start", "hogs_on_cpu0"]

LOGS_ARGS = {"service": "order-service", "since": "2026-10-29T20:00"}
READ_LOGS = GatePolicy(auto_approve=frozenset({"query_errors", "hello", "started_with"}))
STRAY_PRINT = ServerSpec(
    "stray",
    command=sys.executable,
    args=(
        "-c",
        textwrap.dedent("""
    print("debug: starting")   # a learner's leftover print, before the server takes stdout over
    print("debug: ready")
    from mcp.server.mcpserver import MCPServer
    mcp = MCPServer("stray")

    @mcp.tool()
    def hello() -> str:
        return "hi"

    mcp.run()
"""),
    ),
)
_HOGS = 3
"""Processes spinning on CPU 0 beside a host pinned there: each of them gets a quarter of that CPU."""


async def tool_raises() -> Replay:
    """A tool raises a plain exception (not a ToolError): the model gets what the SDK sends, the learner the cause."""
    return await _calls(
        ServerSpec("faulty"),
        ("raise_error", {"message": "disk full at /srv/reports"}),
        policy=GatePolicy(auto_approve=frozenset({"raise_error"})),
    )


async def stray_print() -> Replay:
    """A stdio server prints two lines on its stdout before it serves; then a call."""
    return await _calls(STRAY_PRINT, ("hello", {}), policy=READ_LOGS)


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


_NO_PROXY_THERE = "http://127.0.0.1:9"  # the discard port: nothing listens, as for a proxy out of reach


_NO_SOCKS_PROXY_THERE = "socks5://127.0.0.1:9"
"""A SOCKS proxy, which httpx can use only with a package the lab does not install (socksio)."""


async def behind_a_proxy(transport: str, every: str = _NO_PROXY_THERE) -> Replay:
    """`HTTP_PROXY`/`HTTPS_PROXY` set, as on a school network (and `ALL_PROXY` to `every`), and the lab's own server
    on 127.0.0.1."""
    with _environment(
        HTTP_PROXY=_NO_PROXY_THERE,
        HTTPS_PROXY=_NO_PROXY_THERE,
        http_proxy=_NO_PROXY_THERE,
        https_proxy=_NO_PROXY_THERE,
        ALL_PROXY=every,
        all_proxy=every,
    ):
        return await _calls(ServerSpec("logs", transport=transport), ("query_errors", LOGS_ARGS), policy=READ_LOGS)


async def proxy_variables_passed_on() -> Replay:
    """A server given the host's `HTTP_PROXY` (as a config may give it) reports the `NO_PROXY` it was started with."""
    with _environment(HTTP_PROXY=_NO_PROXY_THERE, NO_PROXY="intranet.example"):
        return await _calls(
            ServerSpec("replays.env_server", inherit=("HTTP_PROXY", "NO_PROXY")),
            ("started_with", {"name": "NO_PROXY"}),
            policy=READ_LOGS,
        )


async def damaged_store(folder: Path, damage: str) -> Replay:
    """The log store is `damage`d ("corrupt": not a database; "locked": another program holds its write lock)."""
    folder.mkdir(parents=True, exist_ok=True)
    store = folder / "logs.sqlite"
    holder = None
    if damage == "corrupt":
        store.write_bytes(b"these bytes are not an SQLite database\n" * 100)
    else:
        await _calls(
            ServerSpec("logs", env={"LABKIT_DATA_DIR": str(folder)}), ("query_errors", LOGS_ARGS), policy=READ_LOGS
        )  # builds the store
        holder = sqlite3.connect(store, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
    try:
        return await _calls(
            ServerSpec("logs", env={"LABKIT_DATA_DIR": str(folder)}), ("query_errors", LOGS_ARGS), policy=READ_LOGS
        )
    finally:
        if holder is not None:
            holder.close()


_LEARNERS_SERVER = """
from mcp.server.mcpserver import MCPServer

mcp = MCPServer("mine")


@mcp.tool()
def hello() -> str:
    return "hi"


mcp.run()
"""


async def learners_file_shadows_an_import(folder: Path, warm: bool, name: str = "mcp.py") -> Replay:
    """A learner's server beside a file of theirs named `name` (`mcp.py`; `selectors.py`, a module the standard
    library imports deep down), started warm (forked) or cold."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("# my notes on the Model Context Protocol\nimport os, sys, io, selectors\n")
    (folder / "server.py").write_text(_LEARNERS_SERVER)
    with _environment(LABKIT_WARM_START="1" if warm else "0"):
        return await _calls(
            ServerSpec("mine", command=sys.executable, args=(str(folder / "server.py"),)),
            ("hello", {}),
            policy=READ_LOGS,
        )


_READ_ONLY_CHECKOUT = 'mount --bind -o ro "$0" "$0" && cd "$0" && exec "$1" -m labkit run canonical'


def read_only_checkout(data_dir: Path | None) -> Replay:
    """`python -m labkit run canonical` in this checkout mounted read-only (a private mount namespace), with its
    default data folder and `out/` inside it, or `LABKIT_DATA_DIR` set to a folder it can write."""
    env = {name: value for name, value in os.environ.items() if name != "LABKIT_DATA_DIR"}
    if data_dir is not None:
        data_dir.mkdir(parents=True, exist_ok=True)
        env["LABKIT_DATA_DIR"] = str(data_dir)
    child = subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c", _READ_ONLY_CHECKOUT, str(REPO), sys.executable],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    return Replay(returncode=child.returncode, stderr=child.stderr, stdout=child.stdout)


_ONE_CALL = textwrap.dedent("""
    import json, subprocess, sys, time, anyio
    from labkit.host import GatePolicy, Host, ServerSpec
    from labkit.trace import Trace

    async def main():
        server, tool, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])

        async def personal_space(message, schema):
            return {"space": "personal"}

        policy = GatePolicy(approve_all=True)
        async with Host(Trace(), [ServerSpec(server)], policy=policy, elicit=personal_space) as host:
            result = await host.call(tool, arguments)
        print(json.dumps({"call_id": result.call_id, "text": result.text, "is_error": result.is_error}))

    anyio.run(main)
""")
_MOUNT_THEN_RUN = (
    'options=$1; shift; while [ "$1" != -- ]; do mount -t tmpfs -o "$options" tmpfs "$1" || exit 97; shift; done; '
    'shift; exec "$@"'
)


def _on_tmpfs(folders: list[Path], options: str, command: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """`command` run in a private mount namespace where each of `folders` is a new tmpfs (mount `options`)."""
    private = ["unshare", "--map-root-user", "--mount", "sh", "-c", _MOUNT_THEN_RUN, "sh", options]
    return subprocess.run(
        [*private, *map(str, folders), "--", *command],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO), "LABKIT_WARM_START": "0", **env},
    )


def _call_on_tmpfs(folders: list[Path], options: str, call: tuple[str, str, dict[str, Any]], **env: str) -> Replay:
    """One call by a host in a private mount namespace where each of `folders` is a new tmpfs (mount `options`)."""
    server, tool, arguments = call
    child = _on_tmpfs(folders, options, [sys.executable, "-c", _ONE_CALL, server, tool, json.dumps(arguments)], **env)
    if child.returncode != 0:
        return Replay(error=RuntimeError(child.stderr[-2000:]), returncode=child.returncode, stderr=child.stderr)
    return Replay(results=[ToolResult(**json.loads(child.stdout.splitlines()[-1]))], stderr=child.stderr)


_TINY_DISK = "size=64k"
"""A filesystem too small for the log store the logs server builds on first use."""


def disk_full(data: Path) -> Replay:
    """The logs server's data folder is on a filesystem that fills up while it builds its store."""
    data.mkdir(parents=True, exist_ok=True)
    return _call_on_tmpfs([data], _TINY_DISK, ("logs", "query_errors", LOGS_ARGS), LABKIT_DATA_DIR=str(data))


def _system_fonts() -> list[Path]:
    from matplotlib import font_manager

    return [Path(d) for d in font_manager.X11FontDirectories if Path(d).is_dir()]


def chart_without_a_cjk_font(folder: Path, language: str) -> Replay:
    """The charts server in `language` on a machine whose system font folders are empty (as a minimal image's are):
    matplotlib finds only the fonts it ships, and builds its font list afresh (in a HOME of the server's own)."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    (folder / "home").mkdir(exist_ok=True)
    # The server is given HOME and not MPLCONFIGDIR (the host passes a short allow-list): a HOME of its own keeps the
    # font list it builds without the system fonts out of the user's cache, which every other chart reads.
    return _call_on_tmpfs(
        _system_fonts(),
        "mode=0755",
        ("charts", "render_error_trend", LOGS_ARGS),
        LABKIT_DATA_DIR=str(folder / "data"),
        LABKIT_LANG=language,
        HOME=str(folder / "home"),
    )


_LESSON_UP_TO = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import nbformat
    from nbclient import NotebookClient
    from labkit._time_limits import scaled

    path, last = Path(sys.argv[1]), int(sys.argv[2])
    notebook = nbformat.read(path, as_version=4)
    notebook.cells = notebook.cells[: last + 1]
    folder = {"metadata": {"path": str(path.parent)}}
    # nbclient's limit is a hang guard only, as tools/notebooks.py's: a cell's own calls have the host's limits.
    NotebookClient(notebook, timeout=round(scaled(600)), allow_errors=True, resources=folder).execute()
    print(json.dumps(notebook.cells[last].outputs))
""")


def lesson_without_a_cjk_font(folder: Path, lesson: Path, cell: int) -> Replay:
    """The `lesson` notebook run up to its cell `cell` (a scripted user answering its forms, as under CI) on a machine
    whose system font folders are empty: in `stdout`, that cell's outputs."""
    (folder / "data").mkdir(parents=True, exist_ok=True)
    (folder / "home").mkdir(exist_ok=True)
    child = _on_tmpfs(
        _system_fonts(),
        "mode=0755",
        [sys.executable, "-c", _LESSON_UP_TO, str(lesson), str(cell)],
        LABKIT_DATA_DIR=str(folder / "data"),
        LABKIT_SCRIPTED_USER="1",
        HOME=str(folder / "home"),
    )
    error = RuntimeError(child.stderr[-3000:]) if child.returncode != 0 else None
    return Replay(error=error, returncode=child.returncode, stderr=child.stderr, stdout=child.stdout)


def can_mount_privately() -> bool:
    """Whether this machine lets a user make a private mount namespace (`unshare -rm`), as the read-only case needs."""
    try:
        return subprocess.run(["unshare", "--map-root-user", "--mount", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


async def silent_start_under(limit: float) -> Replay:
    """A server that never answers, under a start-up limit of `limit` seconds (scaled by `LABKIT_TIME_SCALE`)."""
    return await _calls(SILENT, start_timeout=limit)


_SDKS_PROBE_S = 10
"""How long the SDK's `server/discover` probe waits by itself before it tries the old handshake
(`mcp.client.session.DISCOVER_TIMEOUT_SECONDS`)."""
_STARTS_SLOWLY = """
import sys, time
time.sleep(float(sys.argv[1]))  # loading what it serves (an index, a model) before it answers
from mcp.server.mcpserver import MCPServer
mcp = MCPServer("slow")

@mcp.tool()
def hello() -> str:
    return "hi"

mcp.run()
"""


async def slower_than_the_sdks_probe() -> Replay:
    """A server that takes a second longer to start than the SDK's probe waits by itself, within the host's limit."""
    spec = ServerSpec("slow", command=sys.executable, args=("-c", _STARTS_SLOWLY, str(_SDKS_PROBE_S + 1)))
    return await _calls(spec, ("hello", {}), policy=READ_LOGS)


_KILLS_ITSELF = """
import os, signal
from mcp.server.mcpserver import MCPServer
mcp = MCPServer("doomed")

@mcp.tool()
def die() -> str:
    os.kill(os.getpid(), signal.SIGKILL)  # as the kernel's OOM killer, or a `kill -9` from another terminal
    return "never"

mcp.run()
"""


async def killed_by_a_signal_mid_call() -> Replay:
    """A learner's server killed by SIGKILL during a call."""
    spec = ServerSpec("doomed", command=sys.executable, args=("-c", _KILLS_ITSELF))
    return await _calls(spec, ("die", {}), policy=GatePolicy(auto_approve=frozenset({"die"})))


_SUPERVISOR_ACTS_S = 3.0
"""Ample time for a supervisor told to stop its server to have it stopped (a server that stops cleanly takes well
under a second; one that does not is killed after 5 s), so a call after it reaches a server that is still running
only if none was told."""


async def http_server_after_its_starting_thread_ended(folder: Path) -> Replay:
    """A lab HTTP server started by a thread that has ended since, as the host starts its HTTP servers in anyio's
    worker threads, which it retires after 10 s without work (outside test #20: a run longer than that lost its
    server); then a call, once its supervisor has had time to act on that thread's end."""
    started: ExitStack = ExitStack()
    urls: list[str] = []
    with started, _environment(LABKIT_DATA_DIR=str(folder)):
        starter = threading.Thread(target=lambda: urls.append(started.enter_context(http_server("logs"))))
        starter.start()
        starter.join()
        servers = [p for p in psutil.Process().children(recursive=True) if "servers.logs" in command_line(p)]
        await anyio.to_thread.run_sync(lambda: psutil.wait_procs(servers, timeout=scaled(_SUPERVISOR_ACTS_S)))
        return await _calls(ServerSpec("logs", url=urls[0]), ("query_errors", LOGS_ARGS), policy=READ_LOGS)


@contextmanager
def hogs_on_cpu0(count: int = _HOGS) -> Iterator[None]:
    """`count` Python processes spinning on CPU 0 while the block runs."""
    hogs = [subprocess.Popen(["taskset", "-c", "0", sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


_START = textwrap.dedent("""
    import json, sys, anyio, psutil
    from labkit.host import Host, ServerSpec, ServerStartError
    from labkit.trace import Trace

    async def main():
        spec = ServerSpec(sys.argv[2]) if sys.argv[2] == "logs" else ServerSpec(
            "silent", command=sys.executable, args=("-c", "import sys; sys.stdin.read()"))
        try:
            async with Host(Trace(), [spec], start_timeout=float(sys.argv[1])):
                used = sum(sum(p.cpu_times()[:2]) for p in psutil.Process().children(recursive=True))
                print(json.dumps({"started": True, "cpu_seconds": used}))
        except ServerStartError as error:
            print(json.dumps({"started": False, "error": str(error)}))

    anyio.run(main)
""")


def _start(server: str, limit: float, on_cpu0: bool, env: dict[str, str]) -> Replay:
    pinned = ["taskset", "-c", "0"] if on_cpu0 else []
    child = subprocess.run(
        [*pinned, sys.executable, "-c", _START, str(limit), server],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO), "LABKIT_WARM_START": "0", **env},
    )
    outcome: dict[str, Any] = json.loads(child.stdout.splitlines()[-1]) if child.stdout.strip() else {}
    error = None if outcome.get("started") else RuntimeError(outcome.get("error") or child.stderr[-2000:])
    return Replay(error=error, returncode=child.returncode, stderr=child.stderr, stdout=json.dumps(outcome))


def start_cpu_seconds(server: str) -> float:
    """The CPU time `server`, started cold on its own, used until the host had its tools (as much as a start
    limit must allow on a crowded CPU)."""
    replay = _start(server, 60, on_cpu0=False, env={})
    if replay.error is not None:
        raise replay.error
    return float(json.loads(replay.stdout)["cpu_seconds"])


def busy_cpu(server: str, limit: float, **env: str) -> Replay:
    """A host pinned to CPU 0 with `_HOGS` spinning processes starts `server` ("logs", started cold, or "silent",
    which never answers) under a start-up limit of `limit` seconds."""
    with hogs_on_cpu0():
        return _start(server, limit, on_cpu0=True, env=env)


def crowded_start() -> Replay:
    """The logs server started cold on a CPU it shares with `_HOGS` spinning processes, under a start limit of twice
    the CPU time it needs: time enough once its waiting for the CPU is counted, a quarter too little in wall time."""
    return busy_cpu("logs", 2 * start_cpu_seconds("logs"))


_WARM_START = textwrap.dedent("""
    import json, sys, psutil
    from jupyter_client.manager import KernelManager
    from labkit import _warm_kernels

    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=sys.argv[2])  # a first launch: the kernel started cold, the warm Pythons beside it
    try:
        ready = _warm_kernels.wait_until_ready(float(sys.argv[1]))
        used = sum(sum(psutil.Process(pid).cpu_times()[:2]) for pid in _warm_kernels.warm_python_pids())
        print(json.dumps({"ready": ready, "cpu_seconds": used}))
    finally:
        manager.shutdown_kernel(now=True)
""")


def _warm_start(limit: float, on_cpu0: bool) -> Replay:
    pinned = ["taskset", "-c", "0"] if on_cpu0 else []
    child = subprocess.run(
        [*pinned, sys.executable, "-c", _WARM_START, str(limit), str(REPO / "notebooks")],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        env={**{k: v for k, v in os.environ.items() if k != WARM_START_ENV}, "PYTHONPATH": str(REPO)},
    )
    outcome: dict[str, Any] = json.loads(child.stdout.splitlines()[-1]) if child.stdout.strip() else {}
    error = None if outcome.get("ready") else RuntimeError(f"not ready within {limit:.1f} s: {outcome or child.stderr}")
    return Replay(error=error, returncode=child.returncode, stderr=child.stderr, stdout=json.dumps(outcome))


def crowded_warm_start() -> Replay:
    """Jupyter's first launch of a kernel, on a CPU it shares with `_HOGS` spinning processes, starts the warm Pythons
    that fork the next ones; they are waited for under a limit of the CPU time they needed to be ready on their own:
    time enough once their waiting for the CPU is counted, far too little in wall time."""
    alone = _warm_start(scaled(_ALONE_S), on_cpu0=False)
    if alone.error is not None:
        return alone
    with hogs_on_cpu0():
        return _warm_start(json.loads(alone.stdout)["cpu_seconds"], on_cpu0=True)


_ALONE_S = 60
"""A limit for warm Pythons starting on a quiet machine (its CPU time, measured there, is the crowded run's)."""
_CALL = textwrap.dedent("""
    import json, subprocess, sys, time, anyio
    from labkit.host import GatePolicy, Host, ServerSpec
    from labkit.trace import Kind, Trace

    SERVER = '''
    import sys, time
    from mcp.server.mcpserver import MCPServer
    mcp = MCPServer("work")

    @mcp.tool()
    def wait_forever() -> str:
        time.sleep(3600)  # blocked in a sleep (or a read): alive, using no CPU
        return "never"

    @mcp.tool()
    def spin() -> str:
        while True:  # a learner's loop that never ends: on a CPU, or waiting for one, all along
            pass

    @mcp.tool()
    def crunch(cpu_seconds: float) -> str:
        start = time.process_time()
        while time.process_time() - start < cpu_seconds:
            pass
        return "crunched"

    mcp.run()
    '''

    async def compute_on_this_thread():  # the host's event loop kept on the CPU, between slices of a few ms
        while True:
            slice_ends = time.thread_time() + 0.02
            while time.thread_time() < slice_ends:
                pass
            await anyio.sleep(0)

    async def main():
        trace = Trace()
        spec = ServerSpec("work", command=sys.executable, args=("-c", SERVER))
        policy = GatePolicy(auto_approve=frozenset({"wait_forever", "crunch", "spin"}))
        async with Host(trace, [spec], call_timeout=float(sys.argv[1]), start_timeout=120, policy=policy) as host:
            async with anyio.create_task_group() as host_work:
                if sys.argv[4:] == ["computing"]:
                    host_work.start_soon(compute_on_this_thread)
                # Another process of the host's (a warm Python, another server) computes all along the call.
                computing = [sys.executable, "-c", "while True: pass"]
                other = subprocess.Popen(computing) if sys.argv[4:] == ["a child"] else None
                try:
                    result = await host.call(sys.argv[2], json.loads(sys.argv[3]))
                finally:
                    if other is not None:
                        other.kill()
                        other.wait()
                host_work.cancel_scope.cancel()
        causes = [e.meta.get("cause") for e in trace.of_kind(Kind.HOST_NOTE) if e.meta.get("cause")]
        notes = [e.summary for e in trace.of_kind(Kind.HOST_NOTE) if e.meta.get("cause")]
        print(json.dumps({"text": result.text, "is_error": result.is_error, "causes": causes, "notes": notes}))

    anyio.run(main)
""")


_ENDED_OVER_HTTP = textwrap.dedent("""
    import json, os, signal, sys, anyio, psutil
    from labkit.host import Host, ServerSpec
    from labkit.trace import Kind, Meta, Trace

    async def main():
        trace, args = Trace(), {"service": "order-service", "since": "2026-10-29T20:00"}
        async with Host(trace, [ServerSpec("logs", transport="http")], era=sys.argv[1]) as host:
            await host.call("query_errors", args)
            server = psutil.Process(host.pool.processes["logs"].pid)
            server.send_signal(signal.SIGKILL)
            await anyio.to_thread.run_sync(server.wait)
            after = [await host.call("query_errors", args) for _ in range(2)]  # the first finds it ended: restarted
        failed = [
            {"summary": e.summary, "body": e.payload.get("body")}
            for e in trace.of_kind(Kind.HTTP_RESPONSE) if e.meta.get(Meta.STATUS, 0) >= 400
        ]
        first, then = after
        print(json.dumps({"text": first.text, "is_error": first.is_error, "then": then.is_error, "failed": failed}))

    anyio.run(main)
""")


def http_server_killed_between_calls(era: str) -> Replay:
    """A host calls the logs server over HTTP in `era`, the server is killed, and the host calls twice more (the first
    finds it ended and starts it again): that call's result; in `stdout` whether the next failed (`then`) and the
    failed HTTP responses the trace shows; in `stderr` what the learner would read under the cell."""
    return _call([sys.executable, "-c", _ENDED_OVER_HTTP, era])


def busy_cpu_call(tool: str, arguments: dict[str, Any], limit: float) -> Replay:
    """A host pinned to CPU 0 with `_HOGS` spinning processes calls `tool` of a server that either works (`crunch`
    burns its CPU time), loops for ever (`spin`) or hangs in a sleep (`wait_forever`) under a call limit of
    `limit` seconds: the call's result, and in `stdout` the causes (`cause`) and the notes the host gave."""
    with hogs_on_cpu0():
        return _call(["taskset", "-c", "0", sys.executable, "-c", _CALL, str(limit), tool, json.dumps(arguments)])


def hung_tool_while_the_host_computes() -> Replay:
    """A host calls `wait_forever` (a sleep) under a call limit of 2 s while a task of its own event loop computes all
    along, as a notebook's other work would: the server's processes are idle, the host's thread is not."""
    return _call([sys.executable, "-c", _CALL, "2", "wait_forever", "{}", "computing"])


def hung_tool_while_another_process_of_the_host_computes() -> Replay:
    """A host calls `wait_forever` (a sleep) under a call limit of 2 s while a child of its own, not the server's,
    computes all along (as a warm Python starting, or another of its servers working, would): the called server's
    processes are idle."""
    return _call([sys.executable, "-c", _CALL, "2", "wait_forever", "{}", "a child"])


def _call(command: list[str]) -> Replay:
    child = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO), "LABKIT_WARM_START": "0"},
    )
    if not child.stdout.strip():
        return Replay(error=RuntimeError(child.stderr[-2000:]), returncode=child.returncode, stderr=child.stderr)
    outcome = json.loads(child.stdout.splitlines()[-1])
    result = ToolResult("call", outcome["text"], outcome["is_error"])
    return Replay(results=[result], returncode=child.returncode, stderr=child.stderr, stdout=json.dumps(outcome))


CASES = {
    "a tool raises: the cause shown to the learner": lambda _: tool_raises(),
    "stray print() on a stdio server's stdout": lambda _: stray_print(),
    "HTTP_PROXY set, lab server over HTTP": lambda _: behind_a_proxy("http"),
    "ALL_PROXY=socks5://, lab server over HTTP": lambda _: behind_a_proxy("http", _NO_SOCKS_PROXY_THERE),
    "HTTP_PROXY set, NO_PROXY given to a server": lambda _: proxy_variables_passed_on(),
    "log store corrupt": lambda folder: damaged_store(folder, "corrupt"),
    "log store locked": lambda folder: damaged_store(folder, "locked"),
    "learner's mcp.py beside their server, warm": lambda folder: learners_file_shadows_an_import(folder, True),
    "learner's mcp.py beside their server, cold": lambda folder: learners_file_shadows_an_import(folder, False),
    "log store on a full disk": lambda folder: disk_full(folder / "data"),
    "Chinese chart, no CJK font on the machine": lambda folder: chart_without_a_cjk_font(folder, "zh_CN"),
    "start slower than the SDK's own 10 s probe": lambda _: slower_than_the_sdks_probe(),
    "HTTP server whose starting thread has ended": http_server_after_its_starting_thread_ended,
    "server killed by SIGKILL mid-call: its end named": lambda _: killed_by_a_signal_mid_call(),
    "HTTP server killed between calls: its port's answers": lambda _: http_server_killed_between_calls("2025-11-25"),
    "read-only checkout, no LABKIT_DATA_DIR": lambda _: read_only_checkout(None),
    "read-only checkout, LABKIT_DATA_DIR set": lambda folder: read_only_checkout(folder / "data"),
    "start on a busy CPU (limit: twice its CPU time)": lambda _: crowded_start(),
    "Jupyter's warm Pythons on a busy CPU (limit: their CPU time)": lambda _: crowded_warm_start(),
    "hung server on a busy CPU: the message": lambda _: busy_cpu("silent", 2),
    "hung tool on a busy CPU: the message": lambda _: busy_cpu_call("wait_forever", {}, 2),
    "hung tool while the host computes: the message": lambda _: hung_tool_while_the_host_computes(),
    "hung tool while another of the host's processes computes": lambda _: (
        hung_tool_while_another_process_of_the_host_computes()
    ),
    "tool needing 2 s of CPU, 3 s limit, busy CPU": lambda _: busy_cpu_call("crunch", {"cpu_seconds": 2}, 3),
}
"""Each case by the name the table shows; a case gets a fresh folder of its own for what it writes."""
