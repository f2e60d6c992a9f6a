"""Start the lab's MCP servers as real processes: stdio parameters and HTTP servers on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from mcp import StdioServerParameters

__all__ = ["REPO_ROOT", "WORKDIR_ENV", "free_port", "http_server", "server_env", "stdio_params"]

REPO_ROOT = Path(__file__).resolve().parent.parent
WORKDIR_ENV = "LABKIT_WORKDIR"
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")


def server_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a lab server starts with: a short allow-list, never API keys (notebook 02).

    Variables named `LABKIT_*` (data folder, sealing key) are passed on so that every server of a
    run sees the same business systems.
    """
    env = {k: os.environ[k] for k in _PASSED_THROUGH if k in os.environ}
    env.update({k: v for k, v in os.environ.items() if k.startswith("LABKIT_")})
    env["PYTHONPATH"] = str(REPO_ROOT)
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


def stdio_params(
    server: str, *args: str, env: Mapping[str, str] | None = None
) -> StdioServerParameters:
    """How to launch `servers/<server>.py` (or a dotted module) over stdio with this kernel's Python (notebook 02).

    The server starts in the repository, or in the folder named by `LABKIT_WORKDIR` in its
    environment (notebook 07: a confined working folder).
    """
    full_env = server_env(env)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", _module(server), *args],
        env=full_env,
        cwd=full_env.get(WORKDIR_ENV) or str(REPO_ROOT),
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def http_server(
    server: str,
    *args: str,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    start_timeout: float = 20.0,
    errlog: IO[str] | None = None,
) -> Iterator[str]:
    """Run `servers/<server>.py --http` in a child process; yields its URL (notebook 02).

    The child is stopped (SIGTERM, then SIGKILL) when the block ends, whatever happened inside.
    """
    port = port or free_port()
    log = errlog or tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", _module(server), "--http", "--port", str(port), *args],
        env=server_env(env),
        cwd=str(REPO_ROOT),
        stdout=subprocess.DEVNULL,
        stderr=log,
        start_new_session=True,
    )
    try:
        _wait_for_port(proc, port, start_timeout, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        _stop(proc)
        if errlog is None:
            log.close()


def _module(server: str) -> str:
    """`logs` means the lab's `servers.logs`, `untrusted.docs` its `servers.untrusted.docs`; other dotted names are modules."""
    return f"servers.{server}" if "." not in server or server.startswith("untrusted.") else server


def _wait_for_port(proc: subprocess.Popen, port: int, timeout: float, log: IO[str]) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"server exited with code {proc.returncode} before listening:\n{log.read()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    _stop(proc)
    raise TimeoutError(f"server did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
