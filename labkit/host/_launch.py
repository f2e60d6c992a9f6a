"""Which servers the host can start or reach (`ServerSpec`), and how: stdio parameters, HTTP children, supervised."""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from mcp import StdioServerParameters

from .._i18n import language
from ._message_limit import max_message_bytes
from ._ports import free_port, listened_by
from ._sandbox import sandboxed
from ._start_errors import ServerStartError, StartRecord
from ._tempdirs import LabTempDir
from ._warm import warm_socket

__all__ = [
    "DEFAULT_DATA_DIR", "LAB_SHARED_ENV", "REPO_ROOT", "SEALING_KEY_ENV", "TRANSPORTS", "WORKDIR_ENV", "ServerSpec", "free_port", "http_server", "server_env", "stdio_params",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
WORKDIR_ENV = "LABKIT_WORKDIR"
DATA_DIR_ENV = "LABKIT_DATA_DIR"
DEFAULT_DATA_DIR = REPO_ROOT / "data"
"""Where the lab's servers keep their business systems when the host's environment names no other folder."""
SEALING_KEY_ENV = "LABKIT_REQUEST_STATE_KEY"
LAB_SHARED_ENV = (DATA_DIR_ENV, "LABKIT_REQUEST_STATE_TTL", WORKDIR_ENV)
"""The host variables every lab server is given: where the business systems are, and how long a seal lasts."""
TRANSPORTS = ("stdio", "http")
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")
_SUPERVISOR = str(Path(__file__).with_name("_supervisor.py"))


@dataclass(frozen=True)
class ServerSpec:
    """A server the host connects to (notebook 02): a lab server by name, any stdio command, or an HTTP URL.

    - `ServerSpec("logs")`: the lab's `servers/logs.py` over stdio (`transport="http"`: started on 127.0.0.1);
    - `ServerSpec("time", command="mcp-server-time", args=("--local-timezone", "UTC"))`: any program;
    - `ServerSpec("remote", url="http://127.0.0.1:8000/mcp", headers={...})`: a running Streamable HTTP server.

    `inherit` names the host's environment variables the server is given (None: the default of
    `inherited`); `env` adds values of its own. `sandbox=True` runs a stdio server under bubblewrap
    (`sandboxed`), with the folders in `hide` replaced by empty ones.
    """

    name: str
    transport: str = "stdio"
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    command: str | None = None
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    inherit: tuple[str, ...] | None = None
    sandbox: bool = False
    hide: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        if self.url is not None:
            object.__setattr__(self, "transport", "http")
        if self.transport not in TRANSPORTS:
            raise ValueError(f"server {self.name!r}: transport must be one of {', '.join(TRANSPORTS)}, "
                             f"not {self.transport!r}")
        if self.url is not None and self.command is not None:
            raise ValueError(f"server {self.name!r}: give a command or a url, not both")
        if self.command is not None and self.transport == "http":
            raise ValueError(f"server {self.name!r}: a command is started over stdio; to use HTTP, start it "
                             "yourself and give its url")

    @property
    def lab_server(self) -> bool:
        """True for the lab's own `servers/<name>.py`."""
        return self.command is None and self.url is None

    @property
    def inherited(self) -> tuple[str, ...]:
        """The host variables this server gets: `inherit` if given; else, for a lab server, `LAB_SHARED_ENV`
        plus the sealing key for the lab's business servers only: a bare name, never a dotted module (notebook 07)."""
        if self.inherit is not None:
            return tuple(self.inherit)
        if not self.lab_server:
            return ()
        # An allow-list: only the lab's own business servers (`servers/<name>.py`, a bare name) share the key.
        business = "." not in self.name
        return (*LAB_SHARED_ENV, SEALING_KEY_ENV) if business else LAB_SHARED_ENV

    def command_line(self) -> list[str]:
        """What is run: the lab server's module with this Python, or the command as given."""
        if self.command is not None:
            return [_installed(self.command), *self.args]
        return [sys.executable, "-m", _module(self.name), *self.args]

    def describe(self) -> str:
        return self.url if self.url is not None else shlex.join(self.command_line())


def server_env(spec: ServerSpec) -> dict[str, str]:
    """The environment a server starts with: a short allow-list, never API keys, plus what its spec names (notebook 02).

    Of the host's own variables it gets only those its spec inherits (`ServerSpec.inherited`): lab
    servers the data folder, so that every server of a run sees the same business systems, and the
    sealing key only where replicas must share it; a command from elsewhere gets only its own `env`.
    """
    env = {k: os.environ[k] for k in _PASSED_THROUGH if k in os.environ}
    env.update({k: os.environ[k] for k in spec.inherited if k in os.environ})
    if spec.lab_server:
        if DATA_DIR_ENV in spec.inherited:
            # named even when it is the default: a sandbox makes writable only the folders the environment names
            env.setdefault(DATA_DIR_ENV, str(DEFAULT_DATA_DIR))
        env["LABKIT_LANG"] = language()  # the lab's servers draw in the learner's language (a chart's labels)
        env["PYTHONPATH"] = str(REPO_ROOT)
        env["PYTHONUNBUFFERED"] = "1"
    env.update(spec.env)
    return env


def _as_spec(server: ServerSpec | str, args: tuple[str, ...], env: Mapping[str, str] | None) -> ServerSpec:
    if isinstance(server, ServerSpec):
        return server
    return ServerSpec(server, args=args, env=dict(env or {}))


def stdio_params(
    server: ServerSpec | str, *args: str, env: Mapping[str, str] | None = None, record: StartRecord | None = None,
) -> StdioServerParameters:
    """How to launch a server over stdio: `servers/<server>.py` with this kernel's Python, or a spec (notebook 02).

    It runs under a small supervisor that stops it when the host dies, ends it when it sends a line
    longer than `max_message_bytes()`, and notes its exit status in `record`. A lab server starts in
    the repository, or in the folder named by `LABKIT_WORKDIR`.
    """
    spec = _as_spec(server, args, env)
    full_env = server_env(spec)
    cwd = spec.cwd or full_env.get(WORKDIR_ENV) or (str(REPO_ROOT) if spec.lab_server else None)
    status = str(record.status_file) if record is not None else _NO_STATUS
    command = sandboxed(spec.command_line(), full_env, cwd, spec.hide) if spec.sandbox else spec.command_line()
    return StdioServerParameters(
        command=sys.executable,
        args=["-I", "-S", _SUPERVISOR, status, "--max-line", str(max_message_bytes()), *_warm(spec, full_env), "--",
              *command],
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
    it stops by itself if this process dies.
    """
    spec = _as_spec(server, args, env)
    port = port or free_port()
    log = errlog or tempfile.TemporaryFile(mode="w+")
    folder = LabTempDir("start")
    record = StartRecord(spec.name, spec.describe(), folder.path / "status.json", log)
    command = [*spec.command_line(), "--http", "--port", str(port)]
    full_env = server_env(spec)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", "-S", _SUPERVISOR, str(record.status_file), *_warm(spec, full_env), "--", *command],
            env=full_env, cwd=str(REPO_ROOT), stdout=subprocess.DEVNULL, stderr=log,
        )
        try:
            _wait_for_port(proc, port, start_timeout, record)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            _stop(proc)
    finally:
        folder.remove()
        if errlog is None:
            log.close()


def _warm(spec: ServerSpec, env: Mapping[str, str]) -> list[str]:
    """The supervisor's `--warm` argument where a lab server can be forked from a Python that has imported the SDK
    already (`_warm_python.py`): not sandboxed, importing the lab from the lab's own folder."""
    if spec.sandbox or not spec.lab_server or env.get("PYTHONPATH") != str(REPO_ROOT):
        return []
    sock = warm_socket(str(REPO_ROOT))
    return ["--warm", sock] if sock else []


def _installed(command: str) -> str:
    """A bare command not on PATH but installed beside this Python (a kernel's venv is often not on PATH)."""
    if os.sep in command or shutil.which(command) is not None:
        return command
    beside = Path(sys.executable).with_name(command)
    return str(beside) if beside.exists() else command


def _module(server: str) -> str:
    """`logs` means the lab's `servers.logs`, `untrusted.docs` its `servers.untrusted.docs`; other dotted names are modules."""
    return f"servers.{server}" if "." not in server or server.split(".")[0] in ("untrusted", "attacks") else server


def _wait_for_port(proc: subprocess.Popen, port: int, timeout: float, record: StartRecord) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerStartError.from_record(record, "before listening on its port")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                pass
        except OSError:
            time.sleep(0.05)
            continue
        # The supervisor notes its server's pid as it starts it (a child of its own, or of the warm Python).
        server = (record.status() or {}).get("pid", proc.pid)
        if listened_by(server, port) is False:
            _stop(proc)
            raise ServerStartError.from_record(record, f"port {port} on 127.0.0.1 is already used by another program")
        return
    _stop(proc)
    raise ServerStartError.from_record(record, f"it did not listen on 127.0.0.1:{port} within {timeout:.0f} s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
