"""The fault cases of issue 36, each replayed against real processes: a cause the SDK withholds, a busy machine, an
environment that is not ours. `tests/test_faults_explained.py` asserts on them, `python -m benchmarks --only faults`
tabulates them beside those of `tests/fault_cases.py`. Nothing here asserts or times anything.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from labkit.host import GatePolicy, ServerSpec
from tests.fault_cases import REPO, SILENT, Replay, _calls

__all__ = ["CASES", "STRAY_PRINT", "busy_cpu", "hogs_on_cpu0"]

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


async def behind_a_proxy(transport: str) -> Replay:
    """`HTTP_PROXY`/`HTTPS_PROXY` set, as on a school network, and the lab's own server on 127.0.0.1."""
    with _environment(
        HTTP_PROXY=_NO_PROXY_THERE, HTTPS_PROXY=_NO_PROXY_THERE, http_proxy=_NO_PROXY_THERE, https_proxy=_NO_PROXY_THERE
    ):
        return await _calls(ServerSpec("logs", transport=transport), ("query_errors", LOGS_ARGS), policy=READ_LOGS)


async def proxy_variables_passed_on() -> Replay:
    """A server given the host's `HTTP_PROXY` (as a config may give it) reports the `NO_PROXY` it was started with."""
    with _environment(HTTP_PROXY=_NO_PROXY_THERE, NO_PROXY="intranet.example"):
        return await _calls(
            ServerSpec("tests.env_server", inherit=("HTTP_PROXY", "NO_PROXY")),
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


async def learners_file_shadows_an_import(folder: Path, warm: bool) -> Replay:
    """A learner's server beside a file of theirs named `mcp.py`, started warm (forked) or cold."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mcp.py").write_text("# my notes on the Model Context Protocol\n")
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


def can_mount_privately() -> bool:
    """Whether this machine lets a user make a private mount namespace (`unshare -rm`), as the read-only case needs."""
    try:
        return subprocess.run(["unshare", "--map-root-user", "--mount", "true"], capture_output=True).returncode == 0
    except OSError:
        return False


async def silent_start_under(limit: float) -> Replay:
    """A server that never answers, under a start-up limit of `limit` seconds (scaled by `LABKIT_TIME_SCALE`)."""
    return await _calls(SILENT, start_timeout=limit)


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


_START_ON_CPU0 = textwrap.dedent("""
    import json, sys, anyio
    from labkit.host import Host, ServerSpec, ServerStartError
    from labkit.trace import Trace

    async def main():
        spec = ServerSpec(sys.argv[2]) if sys.argv[2] == "logs" else ServerSpec(
            "silent", command=sys.executable, args=("-c", "import sys; sys.stdin.read()"))
        try:
            async with Host(Trace(), [spec], start_timeout=float(sys.argv[1])):
                print(json.dumps({"started": True}))
        except ServerStartError as error:
            print(json.dumps({"started": False, "error": str(error)}))

    anyio.run(main)
""")


def busy_cpu(server: str, limit: float, **env: str) -> Replay:
    """A host pinned to CPU 0 with `_HOGS` spinning processes starts `server` ("logs", started cold, or "silent",
    which never answers) under a start-up limit of `limit` seconds."""
    with hogs_on_cpu0():
        child = subprocess.run(
            ["taskset", "-c", "0", sys.executable, "-c", _START_ON_CPU0, str(limit), server],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(REPO), "LABKIT_WARM_START": "0", **env},
        )
    outcome: dict[str, Any] = json.loads(child.stdout.splitlines()[-1]) if child.stdout.strip() else {}
    error = None if outcome.get("started") else RuntimeError(outcome.get("error") or child.stderr[-2000:])
    return Replay(error=error, returncode=child.returncode, stderr=child.stderr)


CASES = {
    "a tool raises: the cause shown to the learner": lambda _: tool_raises(),
    "stray print() on a stdio server's stdout": lambda _: stray_print(),
    "HTTP_PROXY set, lab server over HTTP": lambda _: behind_a_proxy("http"),
    "HTTP_PROXY set, NO_PROXY given to a server": lambda _: proxy_variables_passed_on(),
    "log store corrupt": lambda folder: damaged_store(folder, "corrupt"),
    "log store locked": lambda folder: damaged_store(folder, "locked"),
    "learner's mcp.py beside their server, warm": lambda folder: learners_file_shadows_an_import(folder, True),
    "learner's mcp.py beside their server, cold": lambda folder: learners_file_shadows_an_import(folder, False),
    "read-only checkout, no LABKIT_DATA_DIR": lambda _: read_only_checkout(None),
    "read-only checkout, LABKIT_DATA_DIR set": lambda folder: read_only_checkout(folder / "data"),
    "start on a busy CPU (3 s limit)": lambda _: busy_cpu("logs", 3),
    "hung server on a busy CPU: the message": lambda _: busy_cpu("silent", 2),
}
"""Each case by the name the table shows; a case gets a fresh folder of its own for what it writes."""
