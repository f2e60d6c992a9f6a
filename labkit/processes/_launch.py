"""How the host starts a server: stdio parameters or an HTTP child, each under the lab's supervisor."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path
from typing import IO

from mcp import StdioServerParameters

from .._time_limits import scaled
from ._busy_machine import Deadline
from ._held_port import HeldPort
from ._host_secret import with_host_secret
from ._message_limit import max_message_bytes
from ._ports import free_port, listened_by
from ._process import ServerEnd, ServerProcess
from ._sandbox import sandboxed
from ._spec import REPO_ROOT, WORKDIR_ENV, ServerSpec, server_env
from ._start_errors import ServerStartError
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
    held_port: HeldPort | None = None,
    on_end: Callable[[ServerEnd], None] | None = None,
    on_start: Callable[[ServerProcess], None] | None = None,
) -> Iterator[str]:
    """Run `servers/<server>.py --http` in a supervised child process; yields its URL (notebook 02).

    The child is stopped (SIGTERM, then SIGKILL) when the block ends, whatever happened inside, and
    it stops by itself if this process dies. A lab server answers only requests carrying the secret it was
    started with (`http_transport` adds it): other users of this machine's loopback cannot call it. Its port is
    bound by this process and held until the block ends (`HeldPort`; the server is given the socket, `--fd`): if
    the server dies, no other process can take the port and answer in its name. A host that starts the server again
    passes the same `held_port`, and the URL stays the same. `on_end` is given how the process ended, once stopped;
    `on_start` the process as it is started.
    """
    spec = _as_spec(server, args, env)
    full_env = server_env(spec)
    passed: tuple[int, ...] = ()
    with ExitStack() as owned:
        if spec.serves_held_port:
            held = held_port or owned.enter_context(closing(_held(spec, port)))
            port, passed = held.port, (held.fd,)
            command = [*spec.command_line(), "--http", "--fd", str(held.fd)]
        else:  # any other server binds its own port, as its `--port` says
            held, port = None, port or free_port()
            command = [*spec.command_line(), "--http", "--port", str(port)]
        url = f"http://127.0.0.1:{port}/mcp"
        if spec.lab_server:
            url = with_host_secret(url, full_env)
        warm = _warm(spec, command, full_env, str(REPO_ROOT))
        listen = ["--listen", str(held.fd)] if held is not None else []
        process = owned.enter_context(ServerProcess(spec, errlog))
        if on_start is not None:
            on_start(process)
        if held is not None:
            held.stop_answering()  # a server started again serves the port the host answered on meanwhile
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", _SUPERVISOR, str(process.status_file), *listen, *warm, "--", *command],
            env=full_env,
            cwd=str(REPO_ROOT),
            stdout=subprocess.DEVNULL,
            stderr=process.errlog,
            pass_fds=passed,
        )
        stopping = threading.Event()
        if held is not None:
            watcher = _answer_once_ended(proc, held, spec.name, process, stopping)
            watcher.start()
            owned.callback(watcher.join)
        try:
            if held is not None:
                _wait_until_serving(proc, held, start_timeout, process)
            else:
                _wait_for_port(proc, port, start_timeout, process)
            yield url
        finally:
            stopping.set()
            _stop(proc)
            if on_end is not None:
                on_end(process.end(wait_s=0))


def _held(spec: ServerSpec, port: int | None) -> HeldPort:
    try:
        return HeldPort(port or 0)
    except OSError as error:
        stage = f"port {port} on 127.0.0.1 is already used by another program: {error.strerror}"
        raise ServerStartError(spec.name, spec.describe(), stage, None, "") from None


def _answer_once_ended(
    proc: subprocess.Popen, held: HeldPort, server: str, process: ServerProcess, stopping: threading.Event
) -> threading.Thread:
    """A thread that, once the server has ended by itself, answers on its held port that it has ended
    (`HeldPort.answer_ended`); a server the host stops is not waited for, and its port answers nothing meanwhile."""

    def watch() -> None:
        proc.wait()
        if not stopping.is_set():
            held.answer_ended(server, (process.note(0) or {}).get("returncode"))

    return threading.Thread(target=watch, name=f"labkit-watch-{server}", daemon=True)


def _warm(spec: ServerSpec, command: list[str], env: Mapping[str, str], cwd: str | None) -> list[str]:
    """The supervisor's `--warm SOCKET REQUEST` where the server may be forked from a Python that has imported the
    SDK already (`_warm_python.py`; `fork_request` decides)."""
    request = fork_request(spec, command, env, cwd)
    sock = warm_socket(str(REPO_ROOT)) if request is not None else None
    return ["--warm", sock, json.dumps(request)] if sock else []


def _wait_until_serving(proc: subprocess.Popen, held: HeldPort, timeout: float, process: ServerProcess) -> None:
    """Until the server answers on the port the host holds: a connection is queued there at once, so only an answer
    (to a request without the secret: refused, which is an answer) says the server has started serving."""
    deadline = Deadline(scaled(timeout))
    with socket.create_connection(("127.0.0.1", held.port)) as probe:
        probe.sendall(_PROBE)
        probe.settimeout(_LOOK_S)
        while not deadline.passed():
            if proc.poll() is not None:
                raise process.end().as_error("before serving on its port")
            try:
                probe.recv(1)
            except TimeoutError:
                continue
            if proc.poll() is None:  # the answer was the server's, not the host's own for a server that ended
                return
    _stop(proc)
    stage = f"it did not serve on 127.0.0.1:{held.port} within {deadline.limit:.0f} s"
    busy = deadline.busy_note()
    raise process.end().as_error(f"{stage}. {busy.rstrip('.')}" if busy else stage)


_PROBE = b"HEAD / HTTP/1.0\r\n\r\n"
"""The least an HTTP server answers: whatever it says, it is serving."""
_LOOK_S = 0.1


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
