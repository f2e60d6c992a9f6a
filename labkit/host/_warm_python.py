"""A Python that has imported the MCP SDK once and forks a server for each start, so none pays that import again.

Started by the host (`labkit/host/_warm.py`) as a script, given the listening socket's file descriptor
and a pipe from the host as stdin: when that pipe closes (the host died or closed), it stops its servers
and exits. Each request is one message from a server's supervisor, carrying the supervisor's stdin,
stdout and stderr: `{"module" or "script", "args", "env", "cwd"}`. The forked child takes those three
descriptors, that environment and folder, and runs the module as `python -m` would, or the script as
`python SCRIPT` would (a learner's own server); the supervisor is told its pid and, later, its exit status.
A child dies with this process, and is killed if its supervisor goes.
It writes `ready` on its stdout once the SDK is imported; the host waits for that before it starts a server.

Only third-party modules are imported ahead: the lab's own modules read their environment (the
learner's language, the data folder) when imported, so they are imported by each child, after fork.
The SDK is imported before the first request is served; matplotlib (the charts server's first chart)
is imported later, one module at a time whenever no request is waiting, so it never delays a start.
"""

import builtins
import ctypes
import importlib.machinery
import io
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import sys
import time
import traceback
import types

_PRELOADED = ("anyio", "pydantic", "sqlite3", "mcp", "mcp.server.mcpserver", "mcp.server.stdio")
_WHEN_IDLE = ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg")
_PR_SET_PDEATHSIG = 1
_MAX_REQUEST = 1 << 20
READY = b"ready\n"
"""What it writes on its stdout once the SDK is imported; the host waits for it (`_warm._await_ready`)."""


def retitle(argv: list[str]) -> None:
    """Show `argv` as this process's command line (`ps`, psutil), written over the space our own argv had.

    As setproctitle(3) does: the title ends with a NUL and the space's last byte is not one, which tells
    Linux to show the title alone. The host starts us with a blank argument to make that space long enough.
    """
    try:
        fields = open("/proc/self/stat").read().rsplit(")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start and arg_end, fields 48 and 49 of proc(5)
        title = " ".join(argv).encode()[: end - start - 2] + b"\0"
        with open("/proc/self/mem", "r+b", buffering=0) as memory:
            memory.seek(start)
            memory.write(title.ljust(end - start, b" "))
    except (OSError, ValueError, IndexError):
        pass  # only the name `ps` shows is lost


def _run_child(request: dict, fds: list[int], owner: int) -> None:
    """In the forked child: become the server the request names. Never returns."""
    code = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != owner:
            os._exit(1)
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in any Python: Ctrl-C is KeyboardInterrupt
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        own_path = os.environ.get("PYTHONPATH")
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()
        sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
        if own_path and os.environ.get("PYTHONPATH") != own_path:  # a script started without the lab's folder
            sys.path[1:] = [p for p in sys.path[1:] if p not in own_path.split(os.pathsep)]
        if "script" in request:
            _run_script(request["script"], request["args"])
        else:
            sys.path[0] = os.getcwd()  # what `python -m` puts first
            sys.argv = [request["module"], *request["args"]]
            retitle([sys.executable, "-m", *sys.argv])
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            code = stop.code or 0
        else:
            print(stop.code, file=sys.stderr)
    except BaseException as crash:  # noqa: BLE001 - a server's crash is reported as `python` reports it
        _print_from_the_server(crash)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    os._exit(code)


def _run_script(script: str, args: list[str]) -> None:
    """Run a Python file as `python SCRIPT ARGS` does: its folder first on `sys.path`, an absolute `__file__`."""
    path = os.path.abspath(script)
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    sys.argv = [script, *args]
    retitle([sys.executable, *sys.argv])
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __builtins__=builtins,
                         __loader__=importlib.machinery.SourceFileLoader("__main__", path))
    sys.modules["__main__"] = main
    with io.open_code(path) as source:
        code = compile(source.read(), path, "exec")
    exec(code, main.__dict__)


def _print_from_the_server(crash: BaseException) -> None:
    """The traceback `python` would print: from the server's own first frame, none of ours or runpy's."""
    frames = crash.__traceback__
    while frames is not None and frames.tb_frame.f_code.co_filename in (__file__, runpy.__file__):
        frames = frames.tb_next
    traceback.print_exception(type(crash), crash, frames)


def _peer_uid(connection: socket.socket) -> int:
    _pid, uid, _gid = struct.unpack("3i", connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return uid


def _send(connection: socket.socket, message: dict) -> None:
    try:
        connection.send(json.dumps(message).encode())
    except OSError:
        pass  # the supervisor is gone; its child is killed when its connection is seen closed


def serve(listener: socket.socket) -> None:
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "host")
    children: dict[int, socket.socket] = {}  # child pid -> its supervisor's connection
    owner = os.getpid()
    later = list(_WHEN_IDLE)
    while True:
        ready = selector.select(timeout=0.2)
        if not ready and later:
            _import_quietly(later.pop(0))
        for key, _ in ready:
            if key.data == "accept":
                connection, _ = listener.accept()
                if _peer_uid(connection) != os.getuid():
                    connection.close()
                    continue
                selector.register(connection, selectors.EVENT_READ, "request")
            elif key.data == "host":
                if not os.read(sys.stdin.fileno(), 4096):
                    for pid in children:
                        os.kill(pid, signal.SIGKILL)
                    return
            else:
                connection = key.fileobj
                message, fds, _, _ = socket.recv_fds(connection, _MAX_REQUEST, 3)
                if not message:  # the supervisor exited or was killed: its server goes with it
                    selector.unregister(connection)
                    connection.close()
                    for pid, owner_connection in children.items():
                        if owner_connection is connection:
                            os.kill(pid, signal.SIGKILL)
                    continue
                pid = os.fork()
                if pid == 0:
                    for other in selector.get_map().values():
                        if isinstance(other.fileobj, socket.socket):
                            other.fileobj.close()
                    selector.close()
                    _run_child(json.loads(message), fds, owner)
                for fd in fds:
                    os.close(fd)
                children[pid] = connection
                _send(connection, {"pid": pid})
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            connection = children.pop(pid, None)
            if connection is not None:
                _send(connection, {"returncode": os.waitstatus_to_exitcode(status)})


def _import_quietly(name: str) -> None:
    try:
        __import__(name)
    except Exception:  # noqa: BLE001 - a child that needs it imports it itself and reports the error there
        pass


def main() -> None:
    # The host decides when its servers stop: a Ctrl-C at the terminal reaches its whole process group.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener = socket.socket(fileno=int(sys.argv[1]))
    retitle([sys.executable, __file__])
    for name in _PRELOADED:
        __import__(name)
    os.write(sys.stdout.fileno(), READY)
    serve(listener)


if __name__ == "__main__":
    main()
