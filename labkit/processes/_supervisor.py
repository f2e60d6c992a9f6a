"""Runs one MCP server as its child: dies with the host, bounds each line the server sends, leaves its exit status.

Started as a script (`python -I -S _supervisor.py STATUS_FILE|- [--max-line BYTES] [--listen FD] [--warm SOCKET
REQUEST] -- COMMAND ARGS...`) so it imports only the standard library and costs a few milliseconds. Stdin and stderr
are passed straight through; with `--max-line`, stdout is passed on as it arrives, and a line longer than BYTES ends the
server: the status file notes the line's size (`cut`) before the host sees its stdout close, and at the end how
many lines were passed on (`lines`: none, and the server never answered). With `--warm`, the host's warm Python
(`labkit/_warm/`) forks what REQUEST names (the host decided it may: `_warm.py`'s `fork_request`) instead of the
command starting cold; if that Python cannot be reached, the command is started as usual. With `--listen`, the
server is given descriptor FD as it is (the listening socket the host holds for an HTTP server), whichever way it
starts.
"""

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1
_KILL_AFTER_S = 5
_CHUNK = 1 << 16
_MEASURE_UP_TO = 1 << 30  # a line that never ends is measured this far, then reported as "at least"


_PARENT_GONE = signal.SIGUSR2
"""What the kernel sends us when the thread that started us ends: our parent's end only if our parent changed."""


def _die_with_parent(sig: int) -> None:
    # Linux only: the kernel sends `sig` when our parent exits, whatever killed it (kill -9 included), and also when
    # the *thread* that started us ends while the process goes on (prctl(2)).
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, sig)


def _forked(warm: str, request: dict, pipe_stdout: bool, listen: int | None):  # -> labkit._warm.Forked | None
    """Ask the warm Python listening at `warm` to run what `request` names, its stdout piped to us if asked.

    None if the warm Python cannot be reached.
    """
    # The warm Python's requester side, loaded by path in this script alone: the lab's package would cost every
    # server start its imports.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_warm"))
    from _client import fork  # type: ignore[import-not-found]  # loaded by path, above

    source, sink = os.pipe() if pipe_stdout else (None, 1)
    try:
        passed = {"pass_fd": listen} if listen is not None else {}
        fds = [0, sink, 2, *([listen] if listen is not None else [])]
        child = fork(warm, {**request, **passed, "env": dict(os.environ), "cwd": os.getcwd()}, fds)
    finally:
        if source is not None:
            os.close(sink)
    if source is not None:
        if child is None:
            os.close(source)
        else:
            child.stdout = os.fdopen(source, "rb", buffering=0)
    return child


def main() -> int:
    status_file, *rest = sys.argv[1:]
    max_line = warm = request = listen = None
    while rest[:1] in (["--max-line"], ["--listen"], ["--warm"]):
        if rest[0] == "--max-line":
            max_line, rest = int(rest[1]), rest[2:]
        elif rest[0] == "--listen":
            listen, rest = int(rest[1]), rest[2:]
        else:
            warm, request, rest = rest[1], json.loads(rest[2]), rest[3:]
    separator, *command = rest
    assert separator == "--", (
        "usage: _supervisor.py STATUS_FILE|- [--max-line BYTES] [--listen FD] [--warm SOCKET REQUEST] -- "
        "COMMAND ARGS..."
    )
    parent = os.getppid()
    signal.signal(_PARENT_GONE, signal.SIG_IGN)  # until there is a child to stop: then `stop_if_orphaned`
    _die_with_parent(_PARENT_GONE)
    if os.getppid() != parent:  # the host died before the line above took effect
        return 1
    try:
        child = (_forked(warm, request, bool(max_line), listen) if warm and request else None) or subprocess.Popen(
            command,
            stdout=subprocess.PIPE if max_line else None,
            preexec_fn=lambda: _die_with_parent(signal.SIGKILL),
            pass_fds=(listen,) if listen is not None else (),
        )
    except OSError as error:
        _write(status_file, {"started": False, "error": f"{type(error).__name__}: {error.strerror or error}"})
        print(f"cannot start {command[0]!r}: {error.strerror or error}", file=sys.stderr)  # noqa: T201 - to the server's stderr, which the host shows
        return 127
    _write(status_file, {"started": True, "pid": child.pid})

    def stop(number: int = signal.SIGTERM, _frame: object = None) -> None:
        child.send_signal(number)
        # A server that does not stop by then is killed: e.g. an HTTP server whose graceful shutdown waits
        # on a request from a client that died with the host.
        signal.alarm(_KILL_AFTER_S)

    def stop_if_orphaned(number: int, _frame: object) -> None:
        # The host starts servers from worker threads (anyio's, retired after 10 s idle): a thread's end that leaves
        # our parent alive is no reason to stop, and the kernel signals us again at the next one's.
        if os.getppid() != parent:
            stop()

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, stop)
    signal.signal(signal.SIGALRM, lambda _number, _frame: child.send_signal(signal.SIGKILL))
    signal.signal(_PARENT_GONE, stop_if_orphaned)
    if os.getppid() != parent:  # the host died while the child was started
        stop()
    sent = [0]  # lines passed on: none means the server never answered
    try:
        cut = _pump(child.stdout.fileno(), max_line, sent) if max_line and child.stdout else None
    except BrokenPipeError:  # the host closed its end: it is stopping the server
        cut = None
        stop()
    if cut is not None:
        _write(status_file, {"started": True, "cut": cut})
        os.close(sys.stdout.fileno())  # the host sees the connection end only once the note is there
        stop()
    code = child.wait()
    _write(
        status_file,
        {"started": True, "returncode": code, "lines": sent[0], **({"cut": cut} if cut is not None else {})},
    )
    return code if code >= 0 else 128 - code


def _pump(source: int, limit: int, sent: list[int]) -> dict | None:
    """Pass the server's stdout on as it arrives, counting its lines in `sent[0]`, until it ends (None) or a line
    grows past `limit` bytes (its size)."""
    line = 0
    while chunk := os.read(source, _CHUNK):
        start = 0
        while (end := chunk.find(b"\n", start)) >= 0 and line + end - start <= limit:
            line, start = 0, end + 1
            sent[0] += 1
        if end >= 0 or line + len(chunk) - start > limit:
            _write_all(chunk[:start])
            return _measured(source, line + (end if end >= 0 else len(chunk)) - start, end >= 0, limit)
        line += len(chunk) - start
        _write_all(chunk)
    return None


def _measured(source: int, seen: int, whole: bool, limit: int) -> dict:
    """The too-long line's size: read on, not passed on, to its end (or as far as is worth measuring)."""
    while not whole and seen < _MEASURE_UP_TO and (chunk := os.read(source, _CHUNK)):
        end = chunk.find(b"\n")
        seen += end if end >= 0 else len(chunk)
        whole = end >= 0
    return {"bytes": seen, "whole": whole, "limit": limit}


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(sys.stdout.fileno(), view) :]


def _write(path: str, status: dict) -> None:
    # "-": nobody reads the note. (Never a device such as /dev/null: as root, replacing it replaces the device.)
    if path == "-":
        return
    # Written whole or not at all: the host may read it while the server is still stopping.
    with open(path + ".part", "w", encoding="utf-8") as handle:
        json.dump(status, handle)
    os.replace(path + ".part", path)


if __name__ == "__main__":
    sys.exit(main())
