"""One server's client, opened, held and closed by a task of its own, in a task group no caller's scope can cancel."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Coroutine
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio
from mcp import Client

__all__ = ["Connection", "Opener", "TaskHome", "Turn"]

Turn = Callable[[], Coroutine[Any, Any, None]]
"""Awaited by a new connection after its server is started and before its first frame, to keep the trace in order."""
Opener = Callable[[Turn], AbstractAsyncContextManager[Client]]
_CLOSE_S = 8.0


async def _no_wait() -> None:
    return None


class TaskHome:
    """A task group in a task of its own: a crash, a restart or a close from another cell cancels none of the callers.

    The SDK requires a client to be exited by the task that entered it, and a client's own task group
    cancels whatever task entered it when its server dies; so no client is ever entered by a caller.
    """

    def __init__(self) -> None:
        self._jobs, self._inbox = anyio.create_memory_object_stream[Callable[[], Coroutine[Any, Any, None]]](math.inf)
        self._runner: asyncio.Task[None] | None = None

    def spawn(self, job: Callable[[], Coroutine[Any, Any, None]]) -> None:
        if self._runner is None:
            # A task of the loop, not a child of the caller: anyio has no detached task, and the lab runs on asyncio.
            self._runner = asyncio.get_running_loop().create_task(self._run())
        self._jobs.send_nowait(job)

    async def _run(self) -> None:
        async with anyio.create_task_group() as group, self._inbox:
            async for job in self._inbox:
                group.start_soon(job)

    async def aclose(self) -> None:
        """Wait for every job to end (the caller asked them to); no new job is accepted."""
        self._jobs.close()
        if self._runner is not None:
            await asyncio.shield(self._runner)


class Connection:
    """A server's client, held by `hold()` running in a `TaskHome`; `reopen()` and `close()` ask that task and wait."""

    def __init__(self, server: str, opener: Opener, turn: Turn = _no_wait) -> None:
        self.server = server
        self._opener = opener
        self._turn = turn
        self._client: Client | None = None
        self._wake = anyio.Event()
        self._answered = anyio.Event()
        self._settled = anyio.Event()  # never replaced: a successor waiting for its turn must not miss a close
        self._error: BaseException | None = None
        self._stopping = False
        self._scope = anyio.CancelScope()
        self.ended_by: Exception | None = None
        """What closing the last opened connection raised: why it ended if the transport knows (a message too large)."""

    @property
    def client(self) -> Client:
        if self._client is None:
            raise RuntimeError(f"the {self.server} server is not connected")
        return self._client

    @property
    def is_open(self) -> bool:
        return self._client is not None

    async def settled(self) -> None:
        """Wait for the first open attempt to end, however it ended (opened, failed, or closed while opening)."""
        await self._settled.wait()

    async def hold(self) -> None:
        """The connection's own task: open, hold until asked, close; again after each `reopen()`."""
        while not self._stopping:
            opened, ended_by = False, None
            with anyio.CancelScope() as self._scope:
                try:
                    async with self._opener(self._turn) as client:
                        self._client, opened = client, True
                        self._answer(None)
                        await self._wake.wait()
                except Exception as error:  # noqa: BLE001 - whatever failed the opening is the opener's error to raise
                    if not opened:
                        self._answer(error)
                    ended_by = error  # once opened, the server is gone and closing can only complain: kept, not raised
                finally:
                    self._client = None
            if opened:
                self.ended_by = ended_by
            self._turn = _no_wait
            await self._wake.wait()
            self._wake = anyio.Event()
        self._answer(None)

    def _answer(self, error: BaseException | None) -> None:
        self._error = error
        self._answered.set()
        self._settled.set()

    async def opened(self) -> None:
        """Wait for the current open attempt; its error, if any, is raised here, in the caller's task."""
        await self._answered.wait()
        if self._error is not None:
            raise self._error

    async def reopen(self) -> None:
        """Close the connection (a dead one's complaints are dropped) and open it again with a new server."""
        self._request(stop=False)
        await self.opened()

    async def close(self) -> None:
        """End the connection and its server; a close that hangs is cut after a few seconds."""
        if self._stopping:
            return
        self._request(stop=True)
        with anyio.move_on_after(_CLOSE_S, shield=True):
            await self._answered.wait()
        if not self._answered.is_set():
            self._scope.cancel()
            with anyio.CancelScope(shield=True):
                await self._answered.wait()

    def _request(self, *, stop: bool) -> None:
        self._stopping = stop
        opening = self._client is None and not self._answered.is_set()
        self._answered = anyio.Event()
        self._error = None
        if stop and opening:
            self._scope.cancel()
        self._wake.set()
