"""A server that does not start says why: its name, its command, its exit status and the end of its stderr."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

__all__ = ["ServerStartError", "StartRecord"]

_TAIL_LINES = 12
_STATUS_WAIT_S = 0.5


@dataclass(frozen=True)
class StartRecord:
    """Where a starting server leaves its traces: the supervisor's status file and the server's stderr."""

    server: str
    command: str
    status_file: Path
    errlog: IO[str]

    def status(self) -> dict[str, Any] | None:
        """The supervisor's note (`started`, `returncode` or `error`), waiting briefly for it to be written."""
        deadline = time.monotonic() + _STATUS_WAIT_S
        while True:
            try:
                return json.loads(self.status_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.02)

    def stderr_tail(self) -> str:
        try:
            self.errlog.flush()
            self.errlog.seek(0)
            lines = self.errlog.read().splitlines()
        except (OSError, ValueError):
            return ""
        return "\n".join(lines[-_TAIL_LINES:])


class ServerStartError(RuntimeError):
    """The server named in `server` could not be started or stopped before it answered (notebook 02).

    `command`, `returncode` (None if it never ran or is still running), `stage` and `stderr` say why;
    `method` is the request a server that did not answer in time was waiting on (`initialize`,
    `server/discover`, `tools/list`), None otherwise.
    """

    def __init__(self, server: str, command: str, stage: str, returncode: int | None, stderr: str,
                 error: str | None = None, method: str | None = None) -> None:
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

    @classmethod
    def from_record(cls, record: StartRecord, stage: str) -> "ServerStartError":
        status = record.status() or {}
        return cls(record.server, record.command, stage, status.get("returncode"),
                   record.stderr_tail(), status.get("error"))
