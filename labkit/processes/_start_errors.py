"""A server that does not start says why: its name, its command, its exit status and the end of its stderr."""

from __future__ import annotations

import os
import re
import signal
import sys
from typing import IO

from .._i18n import _, in_language
from ..errors import LabError

__all__ = ["ServerStartError", "exit_status", "stderr_tail"]

_TAIL_LINES = 12
_TAIL_BYTES = 64 * 1024


def exit_status(returncode: int, lang: str | None = None) -> str:
    """How a process ended, for a person: `exit status 3`, or `killed by signal SIGKILL (9)` for a negative status;
    in `lang`, else the learner's language (notebook 05)."""

    def said(message: str) -> str:
        return _(message) if lang is None else in_language(lang, message)

    if returncode >= 0:
        return said("exit status {code}").format(code=returncode)
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = "?"
    return said("killed by signal {name} ({number})").format(name=name, number=-returncode)


def stderr_tail(errlog: IO[str]) -> str:
    """The last lines a server wrote to `errlog`, read without moving the offset a running server writes at."""
    try:
        errlog.flush()
        data = os.pread(errlog.fileno(), _TAIL_BYTES, max(0, os.fstat(errlog.fileno()).st_size - _TAIL_BYTES))
    except (OSError, ValueError, AttributeError):
        return ""
    lines = data.decode("utf-8", "replace").splitlines()
    tail = lines[-_TAIL_LINES:]
    # A traceback's frames in the server's own files (not Python's, not an installed package's) are kept even when
    # the tail cuts them away: a learner's `selectors.py` is the cause of an error raised deep in the standard library.
    own = [
        frame
        for at, line in enumerate(lines[: -_TAIL_LINES or None])
        if (file := _FRAME.match(line)) is not None and not _installed(file.group(1))
        for frame in lines[at : at + 2]
    ]
    folders = {os.path.dirname(match.group(1)) for line in own if (match := _FRAME.match(line)) is not None}
    named = {name.split(".")[0] for line in tail[-1:] for name in _MODULE.findall(line)}
    shadows = [
        _("{file} is a file of the server's own named like the module {module!r} it imports: rename it.").format(
            file=path, module=module
        )
        for folder in sorted(folders)
        for module in sorted(named)
        if os.path.isfile(path := os.path.join(folder, module + ".py"))
    ]
    return "\n".join([*own, "...", *tail, *shadows] if own else [*tail, *shadows])


_MODULE = re.compile(r"module '([\w.]+)'")


_FRAME = re.compile(r'\s*File "([^"]+)", line \d+')


def _installed(path: str) -> bool:
    """Whether `path` is Python's own or an installed package's (a learner's file is neither)."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return path.startswith("<") or any(path.startswith(root + os.sep) for root in roots) or "-packages" + os.sep in path


class ServerStartError(LabError, RuntimeError):
    """The server named in `server` could not be started or stopped before it answered (notebook 02).

    `command`, `returncode` (None if it never ran or is still running), `stage` and `stderr` say why;
    `method` is the request a server that did not answer in time was waiting on (`initialize`,
    `server/discover`, `tools/list`), None otherwise.
    """

    def __init__(
        self,
        server: str,
        command: str,
        stage: str,
        returncode: int | None,
        stderr: str,
        error: str | None = None,
        method: str | None = None,
    ) -> None:
        self.server, self.command, self.stage = server, command, stage
        self.returncode, self.stderr, self.error, self.method = returncode, stderr, error, method
        if error is not None:
            what = _("could not be started: {error}").format(error=error)
        elif returncode is not None:
            what = _("exited with status {code} {stage}").format(code=returncode, stage=stage)
        else:
            what = _("did not answer: {stage}").format(stage=stage)
        message = _("The {server!r} server ({command}) {what}.").format(server=server, command=command, what=what)
        if stderr:
            message += "\n" + _("Last lines of its stderr:") + f"\n{stderr}"
        elif error is None:
            message += "\n" + _("It wrote nothing to stderr.")
        super().__init__(message)

    def with_stderr(self, errlog: IO[str]) -> ServerStartError:
        """The same error showing the end of `errlog`, when it shows no stderr yet (a server that did not answer)."""
        tail = stderr_tail(errlog)
        if self.stderr or not tail:
            return self
        return ServerStartError(self.server, self.command, self.stage, self.returncode, tail, self.error, self.method)
