"""A Python that has imported modules once and forks a process for each start, so none pays those imports again.

Started (`labkit._warm.WarmPython`) as a script, given the listening socket's file descriptor and a pipe from
its starter as stdin: when that pipe closes (the starter died or closed), it stops its children and exits.
Each request is one message carrying three descriptors, the child's stdin, stdout and stderr, and a fourth if it
says which number the child keeps it as (`pass_fd`: an HTTP server's listening socket, held by its host):
`{"module" or "script", "args", "env", "cwd", "session"?, "pass_fd"?}`. The forked child takes those descriptors, that
environment and folder (and a session of its own if asked), and runs the module as `python -m` would, or the
script as `python SCRIPT` would; the requester is told its pid and, later, its exit status. A child dies with
this process, and is killed if its requester's connection closes. It writes `ready` on its stdout once the
modules it was given are imported; a starter waits for that before it asks for a child.

Only third-party modules are imported ahead: the lab's own modules read their environment (the learner's
language, the data folder) when imported, so they are imported by each child, after fork. Warm Pythons fork
the lab's servers (`labkit/processes/_warm.py`) and Jupyter's kernels (`labkit/_warm_kernels.py`).
"""

# ruff: noqa: E402 - the imports come after _AT_START, which must see none of them

import sys

_AT_START = frozenset(sys.modules)
"""What any Python has imported before it runs a program: a program's own file of that name could not shadow it."""

import builtins
import contextlib
import ctypes
import gc
import importlib.machinery
import io
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import time
import traceback
import types

WHEN_IDLE = "--when-idle"
"""Between the modules imported before it says it is ready and those imported later, whenever it has nothing to do."""
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_STARTED_WITH = dict(os.environ)
_MAX_REQUEST = 1 << 20
_MAX_FDS = 4
_WARM_PATH: list[str] = []
"""Our own `sys.path` as we started: a module found there is the one we imported."""
READY = b"ready\n"
"""What it writes on its stdout once the modules it was given are imported."""


def retitle(argv: list[str]) -> None:
    """Show `argv` as this process's command line (`ps`, psutil), written over the space our own argv had.

    As setproctitle(3) does: the title ends with a NUL and the space's last byte is not one, which tells
    Linux to show the title alone. Our starter gives us a blank argument to make that space long enough.
    """
    try:
        with open("/proc/self/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        start, end = int(fields[45]), int(fields[46])  # arg_start and arg_end, fields 48 and 49 of proc(5)
        title = " ".join(argv).encode()[: end - start - 2] + b"\0"
        with open("/proc/self/mem", "r+b", buffering=0) as memory:
            memory.seek(start)
            memory.write(title.ljust(end - start, b" "))
    except (OSError, ValueError, IndexError):
        pass  # only the name `ps` shows is lost


def _run_child(request: dict, fds: list[int], owner: int) -> int:
    """In the forked child: become the process the request names; its exit status, as `python` would give it."""
    try:
        if not request.get("session"):
            # A server dies with us; a kernel (a session of its own) lives on, adopted by our keeper (`_keeper.py`).
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != owner:
            os._exit(1)
        if request.get("session"):
            os.setsid()  # as subprocess's start_new_session: a session and a process group of its own
        for target, fd in enumerate(fds[:3]):  # each received one is above 2: none is overwritten before it moves
            os.dup2(fd, target)
            os.close(fd)
        if len(fds) > 3 and fds[3] != request["pass_fd"]:  # the stdio ones have moved: the number is free of them
            os.dup2(fds[3], request["pass_fd"])
            os.close(fds[3])
        ours = _path_entries(os.environ.get("PYTHONPATH"))
        # What our imports put in our environment (debugpy's PYDEVD_USE_FRAME_EVAL), the child's own would have.
        by_imports = {name: value for name, value in os.environ.items() if _STARTED_WITH.get(name) != value}
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update({**by_imports, **request["env"]})
        time.tzset()
        sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
        _standard_streams(unbuffered=bool(os.environ.get("PYTHONUNBUFFERED")))
        if "script" in request:
            _run_script(request["script"], request["args"], ours, request["env"])
        else:
            _set_sys_path(os.getcwd(), ours)  # what `python -m` puts first
            _cold_if_shadowed([sys.executable, "-m", request["module"], *request["args"]], request["env"])
            sys.argv = [request["module"], *request["args"]]
            retitle([sys.executable, "-m", *sys.argv])
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        return 0
    except SystemExit as stop:
        if stop.code is None or isinstance(stop.code, int):
            return stop.code or 0
        print(stop.code, file=sys.stderr)  # noqa: T201 - a child's exit message, as `python` prints it
        return 1
    except BaseException as crash:  # noqa: BLE001 - a crash is reported as `python` reports it
        _print_from_the_server(crash)
        return 1


def _cold_if_shadowed(command: list[str], env: dict[str, str]) -> None:
    """Become `command`, started cold (exec, in `env`), if a folder new on this child's `sys.path` holds a module of a
    name we imported ahead (a learner's `mcp.py`): started cold, the program would import that file, so it must here."""
    ahead = {name.partition(".")[0] for name in sys.modules} - _AT_START - set(sys.builtin_module_names)
    for folder in (entry for entry in sys.path if entry not in _WARM_PATH):
        try:
            names = {entry.partition(".")[0] for entry in os.listdir(folder)}
        except OSError:  # not a folder (a zip), or not there
            continue
        for name in ahead & names:
            spec = importlib.machinery.PathFinder.find_spec(name, [folder])
            if spec is not None and spec.loader is not None:  # a namespace portion would not win over ours
                os.execve(command[0], command, env)


def _path_entries(pythonpath: str | None) -> list[str]:
    return [os.path.abspath(entry) for entry in pythonpath.split(os.pathsep)] if pythonpath else []


def _set_sys_path(first: str, ours: list[str]) -> None:
    """`sys.path` as `python` makes it here: `first`, then the PYTHONPATH of this environment, then the rest of ours
    without our own PYTHONPATH (`ours`), made absolute and without duplicates as `site` leaves it."""
    rest = [entry for entry in sys.path[1:] if entry not in ours]
    sys.path[:] = [first, *dict.fromkeys(_path_entries(os.environ.get("PYTHONPATH")) + rest)]


def _end(code: int) -> None:
    """End as `python` ends, but for tearing down the heap: other threads joined, atexit functions run, standard
    streams flushed (as multiprocessing ends a forked child, with the atexit functions of a program of its own).
    Tearing down touches every object: in a child that shares a large heap with us, copying it all first."""
    import atexit
    import threading

    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


def _standard_streams(unbuffered: bool) -> None:
    """sys.stdin, stdout and stderr made anew for the descriptors just put in place, as Python makes them at start:
    buffered unless asked not to be, line by line on a terminal (stderr always), in this Python's encoding."""
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        old = getattr(sys, f"__{name}__")
        raw = io.FileIO(fd, "rb" if fd == 0 else "wb", closefd=False)
        buffered = fd == 0 or not unbuffered
        binary = (io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)) if buffered else raw
        stream = io.TextIOWrapper(
            binary,
            encoding=old.encoding,
            errors=old.errors,
            newline="\n",
            line_buffering=buffered and (raw.isatty() or fd == 2),
            write_through=not buffered,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)


def _run_script(script: str, args: list[str], ours: list[str], env: dict[str, str]) -> None:
    """Run a Python file as `python SCRIPT ARGS` does: its folder first on `sys.path`, an absolute `__file__`."""
    path = os.path.abspath(script)
    _set_sys_path(os.path.dirname(os.path.realpath(path)), ours)
    _cold_if_shadowed([sys.executable, script, *args], env)
    sys.argv = [script, *args]
    retitle([sys.executable, *sys.argv])
    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=path,
        __cached__=None,
        __builtins__=builtins,
        __loader__=importlib.machinery.SourceFileLoader("__main__", path),
    )
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
    # The requester may be gone: its child is killed when its connection is seen closed.
    with contextlib.suppress(OSError):
        connection.send(json.dumps(message).encode())


def _wake_on_child_exit(selector: selectors.BaseSelector) -> socket.socket:
    """Make a child's exit wake `selector` at once, so that its requester hears of it without waiting for a timeout
    (the SDK closes a server by closing its stdin and waiting for it to exit: each stop waited up to 0.2 s)."""
    woken, waker = socket.socketpair()
    waker.setblocking(False)
    signal.set_wakeup_fd(waker.fileno(), warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda _number, _frame: None)  # a handler, so the wake-up byte is written
    selector.register(woken, selectors.EVENT_READ, "child")
    return waker


def _as_a_new_process() -> None:
    """In a forked child: the signal handling any Python starts with, none of ours."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in any Python: Ctrl-C is KeyboardInterrupt


def serve(listener: socket.socket, later: list[str]) -> None:
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ, "starter")
    waker = _wake_on_child_exit(selector)
    children: dict[int, socket.socket] = {}  # child pid -> its requester's connection
    owner = os.getpid()
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
            elif key.data == "child":
                child_socket: socket.socket = key.fileobj  # type: ignore[assignment]  # registered as a socket
                child_socket.recv(4096)
            elif key.data == "starter":
                if not os.read(sys.stdin.fileno(), 4096):
                    for pid in children:
                        os.kill(pid, signal.SIGKILL)
                    return
            else:
                connection = key.fileobj  # type: ignore[assignment]  # registered as a socket
                message, fds, _, _ = socket.recv_fds(connection, _MAX_REQUEST, _MAX_FDS)
                if not message:  # the requester exited or was killed: its child goes with it
                    selector.unregister(connection)
                    connection.close()
                    for pid, owner_connection in children.items():
                        if owner_connection is connection:
                            os.kill(pid, signal.SIGKILL)
                    continue
                pid = os.fork()
                if pid == 0:
                    _as_a_new_process()
                    for other in selector.get_map().values():
                        if isinstance(other.fileobj, socket.socket):
                            other.fileobj.close()
                    selector.close()
                    waker.close()
                    _end(_run_child(json.loads(message), fds, owner))
                for fd in fds:
                    os.close(fd)
                children[pid] = connection
                _send(connection, {"pid": pid})
        _reap(children)


def _reap(children: dict[int, socket.socket]) -> None:
    """Reap every child that has ended, telling the requester of each of ours its exit status. The others are
    orphans of our children's children, adopted because we are a subreaper (`main`)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # no child at all
            return
        if pid == 0:
            return
        connection = children.pop(pid, None)
        if connection is not None:
            _send(connection, {"returncode": os.waitstatus_to_exitcode(status)})


def _import_quietly(name: str) -> None:
    # A child that needs it imports it itself and reports the error there.
    with contextlib.suppress(Exception):
        __import__(name)
    gc.freeze()


def main() -> None:
    """`_warm_python.py FD ROOM MODULE... [--when-idle MODULE...]`: listen on FD (the blank ROOM makes space for
    each child's command line), import the modules before the first request, then the others when idle."""
    # Its starter decides when its children stop: a Ctrl-C at the terminal reaches its whole process group.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A process orphaned below us (a server whose supervisor was killed with its kernel) is ours to reap at once, not
    # init's: some inits reap late (here, seconds), and until then it is a zombie that `psutil.wait_procs` waits for.
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1)
    fd, _room, *modules = sys.argv[1:]
    first = modules[: modules.index(WHEN_IDLE)] if WHEN_IDLE in modules else modules
    listener = socket.socket(fileno=int(fd))
    _WARM_PATH.extend(sys.path)
    retitle([sys.executable, __file__])
    for name in first:
        __import__(name)
    gc.freeze()  # what every child shares stays out of its collections, so its pages are not copied for them
    os.write(sys.stdout.fileno(), READY)
    serve(listener, modules[len(first) + 1 :])


if __name__ == "__main__":
    main()
