"""A server that does not start says why: its name, its command, its exit status and the end of its stderr."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ..errors import LabError

__all__ = ["ServerStartError", "StartRecord"]

_TAIL_LINES = 12
_TAIL_BYTES = 64 * 1024
_STATUS_WAIT_S = 0.5


@dataclass(frozen=True)
class StartRecord:
    """Where a starting server leaves its traces: the supervisor's status file and the server's stderr."""

    server: str
    command: str
    status_file: Path
    errlog: IO[str]

    def status(self, wait_s: float = _STATUS_WAIT_S) -> dict[str, Any] | None:
        """The supervisor's note (`started`, `returncode` or `error`, and `cut`), waiting briefly for it."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                return json.loads(self.status_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.02)

    def stderr_tail(self) -> str:
        return stderr_tail(self.errlog)


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
            what = f"could not be started: {error}"
        elif returncode is not None:
            what = f"exited with status {returncode} {stage}"
        else:
            what = f"did not answer: {stage}"
        message = f"The {server!r} server ({command}) {what}."
        if stderr:
            message += f"\nLast lines of its stderr:\n{stderr}"
        elif error is None:
            message += "\nIt wrote nothing to stderr."
        super().__init__(message)

    def with_stderr(self, errlog: IO[str]) -> ServerStartError:
        """The same error showing the end of `errlog`, when it shows no stderr yet (a server that did not answer)."""
        tail = stderr_tail(errlog)
        if self.stderr or not tail:
            return self
        return ServerStartError(self.server, self.command, self.stage, self.returncode, tail, self.error, self.method)

    @classmethod
    def from_record(cls, record: StartRecord, stage: str) -> ServerStartError:
        status = record.status() or {}
        return cls(
            record.server, record.command, stage, status.get("returncode"), record.stderr_tail(), status.get("error")
        )
