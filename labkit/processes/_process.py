"""One server process under the lab's supervisor, and how it ended as one value: `ServerEnd`."""

from __future__ import annotations

import json
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal

from .._i18n import _, in_language
from ..errors import LabError
from ._message_limit import ServerMessageTooLarge
from ._spec import ServerSpec
from ._start_errors import ServerStartError, exit_status, stderr_tail
from ._tempdirs import LabTempDir

__all__ = ["Ending", "LimitHit", "ServerEnd", "ServerEnded", "ServerProcess"]

_STATUS_WAIT_S = 0.5
Ending = Literal["too large", "not started", "unknown", "running", "exited"]
"""`unknown`: its supervisor left no note (it never ran); `running`: no exit status yet."""


@dataclass(frozen=True)
class LimitHit:
    """The message over the host's limit that made the supervisor end a server: its size (`whole`: its end was
    seen) and the limit, in bytes."""

    size: int
    whole: bool
    limit: int


@dataclass(frozen=True)
class ServerEnd:
    """How a server's process ended, as one value (README, Layout): read from its supervisor's note and its stderr.

    `started` is False when it could not be started (`error` says why, in the system's words); `returncode` is its
    exit status (None while it runs, or if it never ran); `stderr` the last lines it wrote there; `limit_hit` the
    message too large that ended it, if one did; `lines` how many lines it had sent on stdout (none: it never answered).
    """

    server: str
    command: str
    started: bool
    returncode: int | None
    stderr: str
    error: str | None = None
    limit_hit: LimitHit | None = None
    lines: int = 0

    @property
    def why(self) -> Ending:
        """Why it ended, in one word: what `as_error` and the host's account go by."""
        if self.limit_hit is not None:
            return "too large"
        if self.error is not None:
            return "not started"
        if not self.started:
            return "unknown"
        return "running" if self.returncode is None else "exited"

    @property
    def status(self) -> str:
        """Its exit status, or the signal that killed it, for a person ("exit status 3", "killed by signal SIGKILL
        (9)"); "exit status ?" while none is known."""
        return self.status_in(None)

    def status_in(self, lang: str | None) -> str:
        """`status` in `lang` (None: the learner's): what the host tells the model is English (notebook 05)."""
        if self.returncode is not None:
            return exit_status(self.returncode, lang)
        return _("exit status ?") if lang is None else in_language(lang, "exit status ?")

    def as_error(self, stage: str) -> LabError:
        """The error this end is, for a session it cut short: a message over the limit, a server that ended after it
        had answered (`ServerEnded`), or one that never answered (`ServerStartError`, `stage` saying when)."""
        if self.limit_hit is not None:
            hit = self.limit_hit
            return ServerMessageTooLarge(self.server, hit.size, hit.limit, hit.whole)
        if self.lines:
            return ServerEnded(self)
        return ServerStartError(self.server, self.command, stage, self.returncode, self.stderr, self.error)


class ServerEnded(LabError, RuntimeError):
    """The server in `end.server` answered, then ended before its session did (README, Layout); `end` says how."""

    def __init__(self, end: ServerEnd) -> None:
        self.end = end
        self.server, self.returncode, self.stderr = end.server, end.returncode, end.stderr
        message = _("The {server!r} server ({command}) ended during its session, with {status}.").format(
            server=end.server, command=end.command, status=end.status
        )
        if end.stderr:
            message += "\n" + _("Last lines of its stderr:") + f"\n{end.stderr}"
        super().__init__(message)


class ServerProcess:
    """One server as the host runs it (README, Layout): where its supervisor leaves its note, where its stderr goes, and
    `end()`, how it ended. The note's folder, and a stderr file of its own, go with `close()`."""

    def __init__(self, spec: ServerSpec, errlog: IO[str] | None = None) -> None:
        self.spec = spec
        self.errlog: IO[str] = errlog if errlog is not None else tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 - closed by close()
        self._own_errlog = errlog is None
        self._folder = LabTempDir("start")
        self.status_file = self._folder.path / "status.json"
        """The supervisor's note: `started`, then `pid`, then `returncode` (or `error`), `cut` and `lines`."""
        self._pid: int | None = None

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._folder.remove()
        if self._own_errlog:
            self.errlog.close()

    @property
    def pid(self) -> int | None:
        """The server's own process id (not its supervisor's: a server forked warm is the warm Python's child), once
        its supervisor has started it; None before."""
        if self._pid is None:
            self._pid = (self.note(wait_s=0) or {}).get("pid")
        return self._pid

    def note(self, wait_s: float = _STATUS_WAIT_S) -> dict[str, Any] | None:
        """The supervisor's note as it stands, waiting up to `wait_s` for the first one."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                return json.loads(Path(self.status_file).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                if time.monotonic() > deadline:
                    return None
                time.sleep(0.02)

    def end(self, wait_s: float = _STATUS_WAIT_S) -> ServerEnd:
        """How the server ended (or stands, while it runs): one value, read once."""
        note = self.note(wait_s) or {}
        cut = note.get("cut")
        return ServerEnd(
            server=self.spec.name,
            command=self.spec.describe(),
            started=note.get("started", False),
            returncode=note.get("returncode"),
            stderr=stderr_tail(self.errlog),
            error=note.get("error"),
            limit_hit=LimitHit(cut["bytes"], cut["whole"], cut["limit"]) if cut is not None else None,
            lines=note.get("lines", 0),
        )
