"""A server as a process: its spec and environment, its start under a supervisor, its confinement, caps and end.

`ServerSpec` names a server and `server_env` the environment it starts with; `stdio_params` and `http_server` start
it under the lab's supervisor (`_supervisor.py`: it dies with the host and cuts a message over
`max_message_bytes`), an HTTP one on a port the host binds and holds (`HeldPort`), forked by a warm Python where it
can be, sandboxed where its spec asks (`confinement`).
`ServerProcess` owns one started server and `end()` says how it ended, as one value (`ServerEnd`): a server
that does not start raises `ServerStartError`, one that ends mid-session `ServerEnded`; limits are moved on while
the machine is busy (`moving_deadline`). This wing imports no other wing: `labkit.host` builds its MCP clients on it.
"""

from ._busy_machine import Deadline, MovingDeadline, longest, moving_deadline
from ._held_port import HeldPort
from ._launch import http_server, stdio_params
from ._local_ca import LocalCA
from ._loopback import direct_to_loopback
from ._message_limit import MAX_RESULT_BYTES_ENV, ServerMessageTooLarge, max_message_bytes
from ._network_env import network_env
from ._ports import free_port
from ._process import ServerEnd, ServerEnded, ServerProcess
from ._sandbox import Confinement, confinement, sandboxed
from ._spec import DATA_DIR_ENV, DEFAULT_DATA_DIR, REPO_ROOT, TRANSPORTS, WORKDIR_ENV, ServerSpec, server_env
from ._start_errors import ServerStartError
from ._tempdirs import LabTempDir
from ._warm import WARM_START_ENV

__all__ = [
    "DATA_DIR_ENV",
    "DEFAULT_DATA_DIR",
    "MAX_RESULT_BYTES_ENV",
    "REPO_ROOT",
    "TRANSPORTS",
    "WARM_START_ENV",
    "WORKDIR_ENV",
    "Confinement",
    "Deadline",
    "HeldPort",
    "LabTempDir",
    "LocalCA",
    "MovingDeadline",
    "ServerEnd",
    "ServerEnded",
    "ServerMessageTooLarge",
    "ServerProcess",
    "ServerSpec",
    "ServerStartError",
    "confinement",
    "direct_to_loopback",
    "free_port",
    "http_server",
    "longest",
    "max_message_bytes",
    "moving_deadline",
    "network_env",
    "sandboxed",
    "server_env",
    "stdio_params",
]
