"""How the host starts a server: stdio parameters or an HTTP child, each under the lab's supervisor."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from mcp import StdioServerParameters

from .._time_limits import scaled
from ._busy_machine import Deadline
from ._host_secret import with_host_secret
from ._message_limit import max_message_bytes
from ._ports import free_port, listened_by
from ._process import ServerProcess
from ._sandbox import sandboxed
from ._spec import REPO_ROOT, WORKDIR_ENV, ServerSpec, server_env
from ._warm import fork_request, warm_socket

__all__ = ["http_server", "stdio_params"]

_SUPERVISOR = str(Path(__file__).with_name("_supervisor.py"))


def _as_spec(server: ServerSpec | str, args: tuple[str, ...], env: Mapping[str, str] | None) -> ServerSpec:
    if isinstance(server, ServerSpec):
        return server
    return ServerSpec(server, args=args, env=dict(env or {}))


def stdio_params(
    server: ServerSpec | str,
    *args: str,
    env: Mapping[str, str] | None = None,
    process: ServerProcess | None = None,
) -> StdioServerParameters:
    """How to launch a server over stdio: `servers/<server>.py` with this kernel's Python, or a spec (notebook 02).

    It runs under a small supervisor that stops it when the host dies, ends it when it sends a line
    longer than `max_message_bytes()`, and notes how it ended for `process`. A lab server starts in
    the repository, or in the folder named by `LABKIT_WORKDIR`.
    """
    spec = _as_spec(server, args, env)
    full_env = server_env(spec)
    cwd = spec.cwd or full_env.get(WORKDIR_ENV) or (str(REPO_ROOT) if spec.lab_server else None)
    status = str(process.status_file) if process is not None else _NO_STATUS
    command = (
        sandboxed(spec.command_line(), full_env, cwd, readable=spec.readable, writable=spec.writable)
        if spec.sandbox
        else spec.command_line()
    )
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-I",
            "-S",
            _SUPERVISOR,
            status,
            "--max-line",
            str(max_message_bytes()),
            *_warm(spec, command, full_env, cwd),
            "--",
            *command,
        ],
        env=full_env,
        cwd=cwd,
        encoding_error_handler="replace",
    )


_NO_STATUS = "-"
"""The supervisor's status-file argument when nobody reads its note."""


@contextmanager
def http_server(
    server: ServerSpec | str,
    *args: str,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    start_timeout: float = 20.0,
    errlog: IO[str] | None = None,
) -> Iterator[str]:
    """Run `servers/<server>.py --http` in a supervised child process; yields its URL (notebook 02).

    The child is stopped (SIGTERM, then SIGKILL) when the block ends, whatever happened inside, and
    it stops by itself if this process dies. A lab server answers only requests carrying the secret it was
    started with (`http_transport` adds it): other users of this machine's loopback cannot call it.
    """
    spec = _as_spec(server, args, env)
    port = port or free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    command = [*spec.command_line(), "--http", "--port", str(port)]
    full_env = server_env(spec)
    if spec.lab_server:
        url = with_host_secret(url, full_env)
    warm = _warm(spec, command, full_env, str(REPO_ROOT))
    with ServerProcess(spec, errlog) as process:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", _SUPERVISOR, str(process.status_file), *warm, "--", *command],
            env=full_env,
            cwd=str(REPO_ROOT),
            stdout=subprocess.DEVNULL,
            stderr=process.errlog,
        )
        try:
            _wait_for_port(proc, port, start_timeout, process)
            yield url
        finally:
            _stop(proc)


def _warm(spec: ServerSpec, command: list[str], env: Mapping[str, str], cwd: str | None) -> list[str]:
    """The supervisor's `--warm SOCKET REQUEST` where the server may be forked from a Python that has imported the
    SDK already (`_warm_python.py`; `fork_request` decides)."""
    request = fork_request(spec, command, env, cwd)
    sock = warm_socket(str(REPO_ROOT)) if request is not None else None
    return ["--warm", sock, json.dumps(request)] if sock else []


def _wait_for_port(proc: subprocess.Popen, port: int, timeout: float, process: ServerProcess) -> None:
    deadline = Deadline(scaled(timeout))
    while not deadline.passed():
        if proc.poll() is not None:
            raise process.end().as_error("before listening on its port")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                pass
        except OSError:
            time.sleep(0.05)
            continue
        # The supervisor notes its server's pid as it starts it (a child of its own, or of the warm Python).
        server = (process.note() or {}).get("pid", proc.pid)
        if listened_by(server, port) is False:
            _stop(proc)
            raise process.end().as_error(f"port {port} on 127.0.0.1 is already used by another program")
        return
    _stop(proc)
    stage = f"it did not listen on 127.0.0.1:{port} within {deadline.limit:.0f} s"
    busy = deadline.busy_note()
    raise process.end().as_error(f"{stage}. {busy.rstrip('.')}" if busy else stage)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
