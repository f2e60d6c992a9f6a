"""The fault cases of issue 18, replayed against real processes: the fault suite asserts, benchmarks tabulate them.

A case returns a `Replay` (the error it ended in, the results and the trace it left, the server
processes it saw); nothing here asserts or times anything.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import psutil

from labkit.host import (
    GatePolicy,
    Host,
    ServerSpec,
    ToolResult,
    http_server,
    model_client,
)
from labkit.trace import Trace

__all__ = [
    "CASES",
    "CHART_ARGS",
    "FAULTY",
    "FOREIGN_SERVER",
    "LIMIT",
    "MUTE",
    "NOT_UTF8",
    "SILENT",
    "TALKS_THEN_HANGS",
    "Replay",
    "foreign",
    "server_processes",
]

REPO = Path(__file__).resolve().parents[1]
LIMIT = 90
"""Every case's hang guard, in seconds: not a timing claim."""
FAULTY = GatePolicy(auto_approve=frozenset({"sleep_for", "crash_now", "render_error_trend", "huge_result"}))
ANY_CALL = GatePolicy(approve_all=True)
"""For the foreign server, whose tools the gate knows nothing about."""
CHART_ARGS = {"service": "order-service", "since": "2026-10-29T20:00"}

SILENT = ServerSpec("silent", command=sys.executable, args=("-c", "import sys; sys.stdin.read()"))
# Answers the handshake, then never the listing.
HANDSHAKE_ONLY = textwrap.dedent("""
    import json, sys
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "initialize":
            result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                      "serverInfo": {"name": "mute", "version": "0"}}
            print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}), flush=True)
""")
MUTE = ServerSpec("silent", command=sys.executable, args=("-c", HANDSHAKE_ONLY))
# Says what it is doing on stderr, then never answers: what a server stuck loading an index looks like.
TALKS_THEN_HANGS = ServerSpec(
    "stuck",
    command=sys.executable,
    args=(
        "-c",
        textwrap.dedent("""
    import sys
    for n in range(20):
        print(f"loading shard {n} of 20", file=sys.stderr, flush=True)
    sys.stdin.read()
"""),
    ),
)
# Answers every request with bytes that are not UTF-8.
NOT_UTF8 = ServerSpec(
    "garbled",
    command=sys.executable,
    args=(
        "-c",
        textwrap.dedent("""
    import sys
    for line in sys.stdin.buffer:
        sys.stdout.buffer.write(b"\\xff\\xfe\\xfd not utf-8\\n")
        sys.stdout.buffer.flush()
"""),
    ),
)
FOREIGN_SERVER = str(Path(__file__).with_name("foreign_server.py"))


def foreign(**env: str) -> ServerSpec:
    """`replays/foreign_server.py` as a command, the way a server from elsewhere is given: no lab wiring, no cap."""
    return ServerSpec("foreign", command=sys.executable, args=(FOREIGN_SERVER,), env=env)


@dataclass
class Replay:
    """What a case ended in: the error it raised (or None), the results and trace it left, the servers it saw."""

    error: BaseException | None = None
    results: list[ToolResult] = field(default_factory=list)
    trace: Trace = field(default_factory=Trace)
    listed: list[str] = field(default_factory=list)
    """The tool names the host offered, for the case that lists them itself."""
    servers: list[int] = field(default_factory=list)
    """Pids of server processes the case saw, for cases whose servers are not this process's children."""
    returncode: int | None = None
    stderr: str = ""
    stdout: str = ""


def command_line(process: psutil.Process) -> list[str]:
    """The process's command line, or none if it ended as it was read (a zombie has none to read)."""
    try:
        return process.cmdline()
    except psutil.Error:
        return []


def server_processes(module: str) -> list[psutil.Process]:
    """This process's running `servers.<module>` children (their supervisors not counted)."""
    found = []
    for child in psutil.Process().children(recursive=True):
        try:
            if f"servers.{module}" in child.cmdline() and "_supervisor.py" not in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            continue
    return found


async def _calls(
    spec: ServerSpec, *calls: tuple[str, dict[str, Any]], policy: GatePolicy = FAULTY, **options: Any
) -> Replay:
    replay = Replay()
    try:
        async with Host(replay.trace, [spec], policy=policy, **options) as host:
            for tool, arguments in calls:
                replay.results.append(await host.call(tool, arguments))
    except Exception as error:  # noqa: BLE001 - whatever the lab raised is what the case records
        replay.error = error
    return replay


async def crash_mid_call(transport: str) -> Replay:
    """`crash_now` kills the server mid-call; then a second call."""
    return await _calls(ServerSpec("faulty", transport=transport), ("crash_now", {}), ("sleep_for", {"seconds": 0}))


async def dies_between_rounds(transport: str) -> Replay:
    """The charts server is killed while the user fills in its form, between the call's two rounds."""

    async def kill_the_server_then_answer(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        for process in server_processes("charts"):
            process.kill()
            process.wait(5)
        return {"space": "personal"}

    return await _calls(
        ServerSpec("charts", transport=transport),
        ("render_error_trend", CHART_ARGS),
        elicit=kill_the_server_then_answer,
    )


async def restart_inside(enclosure: str) -> Replay:
    """A crash and its restart inside an enclosing `fail_after` or task group, with a second server alongside."""
    replay = Replay()

    async def crash_and_carry_on() -> None:
        async with Host(replay.trace, [ServerSpec("faulty"), ServerSpec("logs")], policy=FAULTY) as host:
            replay.results.append(await host.call("crash_now"))
            replay.results.append(await host.call("sleep_for", {"seconds": 0}))

    if enclosure == "fail_after":
        with anyio.fail_after(LIMIT):
            await crash_and_carry_on()
    else:
        async with anyio.create_task_group() as group:
            group.start_soon(crash_and_carry_on)
    return replay


async def used_from_other_tasks() -> Replay:
    """What a notebook does: one cell opens the host, later cells list and call, another cell closes it."""
    replay = Replay()
    host = Host(replay.trace, [ServerSpec("logs"), ServerSpec("faulty")], policy=FAULTY)
    async with anyio.create_task_group() as cell:
        cell.start_soon(host.__aenter__)
    await host.pool.refresh()
    await host.pool.refresh()
    replay.listed = host.pool.names

    async def call() -> None:
        replay.results.append(await host.call("crash_now"))

    async with anyio.create_task_group() as cell:
        cell.start_soon(call)
    async with anyio.create_task_group() as cell:
        cell.start_soon(host.aclose)
    return replay


async def silent_start(spec: ServerSpec, era: str) -> Replay:
    """A server that never answers (or answers only part of the start), under a 3 s start-up limit."""
    return await _calls(spec, era=era, start_timeout=3)


async def restart_stuck(marker: Path) -> Replay:
    """The foreign server crashes mid-call and its restart hangs, under a 5 s limit (the first start: the default)."""
    replay = Replay()
    try:
        async with Host(replay.trace, [foreign(FOREIGN_STUCK_MARKER=str(marker))], policy=ANY_CALL) as host:
            host.pool.start_timeout = 5
            replay.results.append(await host.call("crash"))
    except Exception as error:  # noqa: BLE001 - whatever the lab raised is what the case records
        replay.error = error
    return replay


def port_taken() -> Replay:
    """The charts server is started on the port the logs server already listens on."""
    replay = Replay()
    with http_server("logs") as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        try:
            with http_server("charts", port=port):
                pass
        except Exception as error:  # noqa: BLE001 - whatever the lab raised is what the case records
            replay.error = error
    return replay


PARENT = textwrap.dedent("""
    import anyio, psutil, sys
    from labkit.host import Host, ServerSpec
    from labkit.trace import Trace

    async def main():
        async with Host(Trace(), [ServerSpec("logs"), ServerSpec("charts", transport="http")]):
            pids = [p.pid for p in psutil.Process().children(recursive=True)]
            print(" ".join(map(str, pids)), flush=True)
            await anyio.sleep(3600)

    anyio.run(main)
""")


def _with_this_lab() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def parent_killed() -> Replay:
    """A process holding a Host with a stdio and an HTTP server is killed with SIGKILL."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, env=_with_this_lab())
    assert parent.stdout is not None  # stdout=PIPE
    try:
        servers = [int(pid) for pid in parent.stdout.readline().split()]
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        parent.stdout.close()
    return Replay(servers=servers, returncode=parent.returncode)


def _started_servers(cli: subprocess.Popen) -> list[psutil.Process]:
    """The CLI's logs and charts servers once both are running (the supervisors are not counted)."""
    while cli.poll() is None:
        servers = [
            child
            for child in psutil.Process(cli.pid).children(recursive=True)
            if any(arg.startswith("servers.") for arg in command_line(child))
            and "_supervisor.py" not in " ".join(command_line(child))
        ]
        if len(servers) == 2:
            return servers
        time.sleep(0.05)
    raise RuntimeError(f"the CLI ended before starting its servers: {cli.communicate()}")


def _cli(out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "labkit", "run", "canonical", "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_with_this_lab(),
    )


def cli_signalled(signals: list[int], out: Path) -> Replay:
    """`python -m labkit run canonical` gets `signals` once its two servers run."""
    cli = _cli(out)
    try:
        servers = _started_servers(cli)
        for number in signals:
            cli.send_signal(number)
        _, stderr = cli.communicate(timeout=LIMIT)
    finally:
        cli.kill()
        cli.wait()
    return Replay(servers=[p.pid for p in servers], returncode=cli.returncode, stderr=stderr)


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM: Python installs none itself, so the CLI's own is in place."""
    caught = next(line for line in Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)))


def cli_interrupted_while_importing(delay: float, out: Path) -> Replay:
    """Ctrl-C `delay` seconds after the CLI took the signals over (its first lines), while it is still importing.

    Counted from then, not from the process's start: before it, Python itself is starting (`site`, `.pth`
    files) and prints its own traceback, which no program can prevent; on a loaded machine that lasts longer.
    """
    cli = _cli(out)
    try:
        deadline = time.monotonic() + LIMIT
        while cli.poll() is None and not _catches_sigterm(cli.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(delay)
        children = [p.pid for p in psutil.Process(cli.pid).children(recursive=True)]
        cli.send_signal(signal.SIGINT)
        _, stderr = cli.communicate(timeout=LIMIT)
    finally:
        cli.kill()
        cli.wait()
    return Replay(servers=children, returncode=cli.returncode, stderr=stderr)


async def huge_result(transport: str) -> Replay:
    """64 MiB in one result from the foreign server (no cap of its own), then 1 MiB."""
    spec = foreign() if transport == "stdio" else ServerSpec("replays.foreign_server", transport="http")
    return await _calls(spec, ("huge", {"megabytes": 64}), ("huge", {"megabytes": 1}), policy=ANY_CALL)


async def over_the_lab_servers_cap() -> Replay:
    """The lab's faulty server asked for its most (16 MiB), over its own 4 MiB cap, over HTTP."""
    return await _calls(ServerSpec("faulty", transport="http"), ("huge_result", {"kilobytes": 16 * 1024}))


async def model_never_answers() -> Replay:
    """A model endpoint on 127.0.0.1 that accepts and never answers, asked by the classroom client with a 0.5 s
    read limit instead of its 60 s (each attempt and retry is in the trace)."""
    replay = Replay()
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        saved = os.environ.get("ANTHROPIC_BASE_URL")
        os.environ["ANTHROPIC_BASE_URL"] = f"http://127.0.0.1:{listener.getsockname()[1]}"
        try:  # the SDK reads its base URL from the environment when the client is made
            client = model_client(
                "anthropic", trace=replay.trace, env={"LABKIT_MODEL": "anthropic:a-model", "ANTHROPIC_API_KEY": "a-key"}
            )
        finally:
            os.environ.pop("ANTHROPIC_BASE_URL")
            if saved is not None:
                os.environ["ANTHROPIC_BASE_URL"] = saved
        hurried = client.with_options(timeout=httpx2.Timeout(0.5, connect=10.0))
        try:
            await hurried.messages.create(model="a-model", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
        except Exception as error:  # noqa: BLE001 - whatever the lab raised is what the case records
            replay.error = error
    return replay


Case = Callable[[Path], "Awaitable[Replay] | Replay"]
CASES: dict[str, Case] = {
    "crash mid-call, stdio": lambda _: crash_mid_call("stdio"),
    "crash mid-call, HTTP": lambda _: crash_mid_call("http"),
    "dies between rounds, stdio": lambda _: dies_between_rounds("stdio"),
    "dies between rounds, HTTP": lambda _: dies_between_rounds("http"),
    "restart inside fail_after": lambda _: restart_inside("fail_after"),
    "restart inside a task group": lambda _: restart_inside("task group"),
    "opened, called, closed from other tasks": lambda _: used_from_other_tasks(),
    "silent server start, 2026-07-28": lambda _: silent_start(SILENT, "2026-07-28"),
    "silent server start, 2025-11-25": lambda _: silent_start(SILENT, "2025-11-25"),
    "silent tools/list": lambda _: silent_start(MUTE, "2025-11-25"),
    "start-up stuck, stderr shown": lambda _: silent_start(TALKS_THEN_HANGS, "2026-07-28"),
    "restart stuck, stderr shown": lambda folder: restart_stuck(folder / "started-once"),
    "invalid UTF-8 on the wire": lambda _: silent_start(NOT_UTF8, "2025-11-25"),
    "HTTP port already taken": lambda _: port_taken(),
    "parent killed (SIGKILL)": lambda _: parent_killed(),
    "CLI Ctrl-C": lambda out: cli_signalled([signal.SIGINT], out),
    "CLI SIGTERM": lambda out: cli_signalled([signal.SIGTERM], out),
    "CLI Ctrl-C twice": lambda out: cli_signalled([signal.SIGINT, signal.SIGINT], out),
    "CLI Ctrl-C while importing": lambda out: cli_interrupted_while_importing(0.3, out),
    "huge result (64 MiB), stdio": lambda _: huge_result("stdio"),
    "huge result (64 MiB), HTTP": lambda _: huge_result("http"),
    "over a lab server's cap, HTTP": lambda _: over_the_lab_servers_cap(),
    "model endpoint never answers": lambda _: model_never_answers(),
}
"""Each case by the name the table shows; a case gets a fresh folder of its own for what it writes."""
