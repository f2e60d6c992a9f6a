"""A server that does not start says why: its name, its command, its exit status and the end of its stderr."""

from __future__ import annotations

import os
from typing import IO

from .._i18n import _
from ..errors import LabError

__all__ = ["ServerStartError", "stderr_tail"]

_TAIL_LINES = 12
_TAIL_BYTES = 64 * 1024


def stderr_tail(errlog: IO[str]) -> str:
    """The last lines a server wrote to `errlog`, read without moving the offset a running server writes at."""
    try:
        errlog.flush()
        data = os.pread(errlog.fileno(), _TAIL_BYTES, max(0, os.fstat(errlog.fileno()).st_size - _TAIL_BYTES))
    except (OSError, ValueError, AttributeError):
        return ""
    lines = data.decode("utf-8", "replace").splitlines()
    return "\n".join(lines[-_TAIL_LINES:])


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
