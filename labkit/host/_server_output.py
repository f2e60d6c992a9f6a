"""What a server wrote where nobody looks, brought to the learner: its stderr during a failed call, and a stray line
on a stdio server's stdout.

The SDK sends the model only `Error executing tool X` for a tool that crashed, and logs the cause on the server's
stderr, which the host keeps in a file per server (`ServerPool.stderr`). The end of what the server wrote there during
the call is recorded as a `server.stderr` event: the learner's table shows it, the model is never given it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from itertools import pairwise
from typing import IO

from pydantic import ValidationError

from .._i18n import _
from ..trace import Kind, Trace

__all__ = ["STRAY_STDOUT_FIX", "StderrMark", "exceptions", "naming_stray_lines"]

_TAIL_LINES = 12
_TAIL_BYTES = 64 * 1024
_SHOWN_CHARS = 120
STRAY_STDOUT_FIX = "print(..., file=sys.stderr)"
_SDK_STDIO_LOGGER = "mcp.client.stdio"


class StderrMark:
    """Where a server's stderr file ended when a call began; `record_since` shows the learner what came after."""

    def __init__(self, errlog: IO[str] | None) -> None:
        self.errlog = errlog
        self.offset = _size(errlog) if errlog is not None else 0

    def written_since(self) -> list[str]:
        """The lines the server wrote to its stderr since the mark (the last 64 KiB of them)."""
        if self.errlog is None:
            return []
        end = _size(self.errlog)
        start = max(self.offset, end - _TAIL_BYTES)
        try:
            data = os.pread(self.errlog.fileno(), end - start, start) if end > start else b""
        except (OSError, ValueError):
            return []
        return [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]

    def record_since(self, trace: Trace, server: str, call_id: str, tool: str) -> list[str]:
        """Record what the server wrote to stderr during the failed call `call_id`, for the learner (notebook 08):
        the exceptions its tracebacks end in (the first is the cause) and its last lines."""
        lines = self.written_since()
        if lines:
            raised = exceptions(lines)
            trace.record(
                "server",
                "host",
                Kind.SERVER_STDERR,
                _("{server} stderr (not sent to the model): {last}").format(
                    server=server, last=raised[0] if raised else lines[-1]
                ),
                ref=call_id,
                name=tool,
                payload={"exceptions": raised, "lines": lines[-_TAIL_LINES:]},
                server=server,
            )
        return lines


def exceptions(lines: list[str]) -> list[str]:
    """The exception lines of the Python tracebacks in `lines`, as Python prints them: the first line at the margin
    after a traceback's indented frames. A chained traceback prints the cause first."""
    return [
        line
        for before, line in pairwise(lines)
        if before[:1].isspace()
        and not line[:1].isspace()
        and not line.startswith(("Traceback ", "The above exception", "During handling"))
    ]


def _size(errlog: IO[str]) -> int:
    try:
        errlog.flush()
        return os.fstat(errlog.fileno()).st_size
    except (OSError, ValueError):
        return 0


class _Listener:
    """The connection a stdio client's reader task serves: which server, which trace, and whether it was named."""

    def __init__(self, trace: Trace, server: str) -> None:
        self.trace, self.server, self.named = trace, server, False


_LISTENER: ContextVar[_Listener | None] = ContextVar("labkit_stdio_listener", default=None)


class _StrayLineFilter(logging.Filter):
    """The SDK's stdio client logs a line on a server's stdout that is not JSON-RPC as an error with its traceback, on
    the host's stderr, and skips it. For a connection of the host's, the line is named to the learner instead, once."""

    def filter(self, record: logging.LogRecord) -> bool:
        listener = _LISTENER.get()
        error = record.exc_info[1] if record.exc_info else None
        if listener is None or not isinstance(error, ValidationError):
            return True
        if not listener.named:
            listener.named = True
            line = str(error.errors()[0].get("input", "")) if error.errors() else ""
            listener.trace.record(
                "host",
                "user",
                Kind.HOST_NOTE,
                _(
                    "The {server} server wrote a line that is not a protocol message to its stdout: {line!r}. "
                    "Over stdio, stdout carries JSON-RPC only; the host skipped the line. "
                    "Write logs to stderr: {fix}, or logging."
                ).format(server=listener.server, line=line[:_SHOWN_CHARS], fix=STRAY_STDOUT_FIX),
                server=listener.server,
                payload={"line": line[:_SHOWN_CHARS], "fix": STRAY_STDOUT_FIX},
            )
        return False


logging.getLogger(_SDK_STDIO_LOGGER).addFilter(_StrayLineFilter())


@contextmanager
def naming_stray_lines(trace: Trace, server: str) -> Iterator[None]:
    """While the SDK's stdio client to `server` starts in this block, the tasks it starts name a stray line on the
    server's stdout to the learner (in `trace`), once (notebook 08)."""
    token = _LISTENER.set(_Listener(trace, server))
    try:
        yield
    finally:
        _LISTENER.reset(token)
