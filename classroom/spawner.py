"""A learner's server is waited for as the lab waits for its own servers: while it works, not for a fixed time.

JupyterHub gives a server `Spawner.http_timeout` seconds of wall time to answer, then stops it with "took too long"
whatever it was doing. `RoomSpawner.start` waits instead, by the lab's `Deadline` over the server's own processes:
`SERVER_UP_S` (times `LABKIT_TIME_SCALE`), moved on while they work but wait for a CPU. When it gives up it says why
(the server ended, is not answering, or the machine is busy) with the tail of the server's own log, which it keeps
in `RoomSpawner.logs_dir` (one file a learner); the hub's own limits are set beyond the furthest it can go.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import httpx
import psutil
from jupyterhub.spawner import LocalProcessSpawner, SimpleLocalProcessSpawner
from traitlets import Unicode

from labkit._time_limits import scaled
from labkit.processes import Deadline, longest

__all__ = ["SERVER_UP_S", "RoomSpawner", "SimpleRoomSpawner", "hub_limit"]

SERVER_UP_S = 120
"""Seconds a learner's server may take to answer on a quiet machine (scaled, and moved on while it works)."""
_LOOK_S = 0.5
_LOG_LINES = 20


def hub_limit() -> int:
    """JupyterHub's own start and HTTP limits: beyond the furthest `RoomSpawner` waits, so the hub never ends a wait
    the spawner would have gone on with."""
    return int(longest(scaled(SERVER_UP_S)) + scaled(SERVER_UP_S))


class RoomSpawner(LocalProcessSpawner):  # type: ignore[misc]  # JupyterHub has no type hints
    """LocalProcessSpawner whose start returns once the learner's server answers, or fails naming why."""

    popen_kwargs: dict[str, Any]  # LocalProcessSpawner's trait, for the type checker
    logs_dir = Unicode("", config=True, help="Folder of each learner's server log (<name>.log); '' keeps none.")

    def log_path(self) -> Path | None:
        return Path(self.logs_dir) / f"{self.user.name}.log" if self.logs_dir else None

    async def start(self) -> Any:
        log = self.log_path()
        if log is not None:
            log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with log.open("ab") as output:  # the server keeps its own copy of the file
                self.popen_kwargs = {**self.popen_kwargs, "stdout": output, "stderr": output}
                address = await super().start()
        else:
            address = await super().start()
        ip, port = address
        await self._until_answering(f"http://{ip}:{port}{self.server.base_url}api")
        return address

    async def stop(self, now: bool = False) -> None:
        """Stop the learner's server, then whatever it started that outlived it: a kernel runs in a process group
        of its own, so a server that ends without shutting its kernels down (as on SIGINT) leaves them running."""
        started = _descendants(self.pid)
        await super().stop(now=now)
        for process in started:
            with contextlib.suppress(psutil.Error):
                process.terminate()
        _, alive = await asyncio.to_thread(psutil.wait_procs, started, timeout=scaled(_LOOK_S * 10))
        for process in alive:
            with contextlib.suppress(psutil.Error):
                process.kill()

    async def _until_answering(self, url: str) -> None:
        """Until the server answers at `url` (any answer below 500, as JupyterHub asks); a `RuntimeError` naming why
        when it ended, or the lab's deadline over its processes passed."""
        deadline = Deadline(scaled(SERVER_UP_S), tree=self.pid)
        async with httpx.AsyncClient(timeout=scaled(_LOOK_S * 10)) as probe:
            while not deadline.passed():
                if (status := self.proc.poll()) is not None:
                    raise self._start_error(f"its server ended (exit status {status}) before it answered")
                try:
                    if (await probe.get(url)).status_code < 500:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(_LOOK_S)
        why = deadline.busy_note() or "Its processes were working (using CPU time) all along: see its log."
        self.proc.terminate()
        raise self._start_error(f"its server did not answer at {url} within {deadline.limit:.0f} s. {why}")

    def _start_error(self, why: str) -> RuntimeError:
        log = self.log_path()
        lines = log.read_text(errors="replace").splitlines()[-_LOG_LINES:] if log is not None and log.exists() else []
        tail = ("\nThe last lines of its log (" + str(log) + "):\n" + "\n".join(lines)) if lines else ""
        return RuntimeError(f"{self.user.name}: {why}{tail}")


def _descendants(pid: int) -> list[psutil.Process]:
    """Every process `pid` started, at any depth (none when it has ended)."""
    try:
        return psutil.Process(pid).children(recursive=True) if pid else []
    except psutil.Error:
        return []


class SimpleRoomSpawner(RoomSpawner, SimpleLocalProcessSpawner):  # type: ignore[misc]
    """RoomSpawner for learners who are not OS users (tests): every server runs as the hub's own user."""
