"""Which servers the host can start or reach (`ServerSpec`), and the environment each is given."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .._i18n import language
from ..server_contract import DATA_DIR_ENV, LANGUAGE_ENV, REQUEST_STATE_KEY_ENV, REQUEST_STATE_TTL_ENV, WORKDIR_ENV
from ._loopback import no_proxy_for_loopback
from ._network_env import network_env

__all__ = [
    "DEFAULT_DATA_DIR",
    "LAB_SHARED_ENV",
    "REPO_ROOT",
    "SEALING_KEY_ENV",
    "TRANSPORTS",
    "WORKDIR_ENV",
    "ServerSpec",
    "server_env",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA_DIR = REPO_ROOT / "data"
"""Where the lab's servers keep their business systems when the host's environment names no other folder."""
SEALING_KEY_ENV = REQUEST_STATE_KEY_ENV
LAB_SHARED_ENV = (DATA_DIR_ENV, REQUEST_STATE_TTL_ENV, WORKDIR_ENV)
"""The host variables every lab server is given: where the business systems are, and how long a seal lasts."""
TRANSPORTS = ("stdio", "http", "sse")
"""`sse`: the legacy HTTP+SSE transport of 2024-11-05, for a running server reached by `url` only."""
_PASSED_THROUGH = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")


@dataclass(frozen=True)
class ServerSpec:
    """A server the host connects to (notebook 02): a lab server by name, any stdio command, or an HTTP URL.

    - `ServerSpec("logs")`: the lab's `servers/logs.py` over stdio (`transport="http"`: started on 127.0.0.1);
    - `ServerSpec("time", command="mcp-server-time", args=("--local-timezone", "UTC"))`: any program;
    - `ServerSpec("remote", url="http://127.0.0.1:8000/mcp", headers={...})`: a running Streamable HTTP server
      (`transport="sse"`: one that speaks the legacy HTTP+SSE transport).

    `inherit` names the host's environment variables the server is given (None: the default of
    `inherited`); `env` adds values of its own. `sandbox=True` runs a stdio server under bubblewrap
    (`sandboxed`): it sees only the system's programs, Python, the lab's code and `readable`, and writes only its
    working folder, HOME, TMPDIR and `writable`.
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
    readable: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        if self.url is not None and self.transport != "sse":
            object.__setattr__(self, "transport", "http")
        if self.transport not in TRANSPORTS:
            raise ValueError(
                f"server {self.name!r}: transport must be one of {', '.join(TRANSPORTS)}, not {self.transport!r}"
            )
        if self.url is not None and self.command is not None:
            raise ValueError(f"server {self.name!r}: give a command or a url, not both")
        if self.transport == "sse" and self.url is None:
            raise ValueError(f"server {self.name!r}: the legacy SSE transport reaches a running server: give its url")
        if self.command is not None and self.transport == "http":
            raise ValueError(
                f"server {self.name!r}: a command is started over stdio; to use HTTP, start it "
                "yourself and give its url"
            )

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
    sealing key only where replicas must share it; a command from elsewhere gets the host's CA and proxy
    variables (`network_env`: `uvx` and `npx` need them behind a corporate proxy) and its own `env`.
    """
    env = {k: os.environ[k] for k in _PASSED_THROUGH if k in os.environ}
    if not spec.lab_server:
        env.update(network_env())
    env.update({k: os.environ[k] for k in spec.inherited if k in os.environ})
    if spec.lab_server:
        if DATA_DIR_ENV in spec.inherited:
            # named even when it is the default: every server of a run must find the same business systems
            env.setdefault(DATA_DIR_ENV, str(DEFAULT_DATA_DIR))
        env[LANGUAGE_ENV] = language()  # the lab's servers draw in the learner's language (a chart's labels)
        env["PYTHONPATH"] = str(REPO_ROOT)
        env["PYTHONUNBUFFERED"] = "1"
    env.update(spec.env)
    env.update(no_proxy_for_loopback(env))
    return env


def _installed(command: str) -> str:
    """A bare command not on PATH but installed beside this Python (a kernel's venv is often not on PATH)."""
    if os.sep in command or shutil.which(command) is not None:
        return command
    beside = Path(sys.executable).with_name(command)
    return str(beside) if beside.exists() else command


def _module(server: str) -> str:
    """`logs` is `servers.logs`, `untrusted.docs` its `servers.untrusted.docs`; other dotted names, modules."""
    return f"servers.{server}" if "." not in server or server.split(".")[0] in ("untrusted", "attacks") else server
