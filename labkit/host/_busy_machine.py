"""Limits for a shared machine: moved on by the time the host and its servers waited for a CPU, and named when busy.

A limit of 30 s means 30 s of a machine that runs the host and its servers when they are ready to run. While they
wait for a CPU (Linux counts it per process: the second field of `/proc/PID/schedstat`), the limit is moved on by
as much, up to `_MOST_TIMES` the limit: a server that is starting on a crowded CPU is given the time it was kept
from, a hung one (not waiting to run, only waiting) is not. `LABKIT_TIME_SCALE` scales every limit
(`labkit/_time_limits.py`); a limit that passes on a busy machine says so, and names that setting.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import psutil

from .._i18n import _
from .._time_limits import TIME_SCALE_ENV, cpu_pressure, machine_load, time_scale
from .._warm import lent_to_us

__all__ = ["Deadline", "MovingDeadline", "moving_deadline"]

_MOST_TIMES = 10
"""A limit is moved on to at most this many times itself, however long its processes waited for a CPU: a server
spinning in a loop on a crowded machine still ends."""
_CHECK_S = 0.5
_BUSY_SHARE = 0.5
"""A machine is busy when, for this share of a limit's time or more, some program waited for a CPU (else, without
Linux's pressure stall information, when its load is above its CPUs)."""
_FIRST_LOOK_S = 1.0
"""When the processes already running are first looked at: a call that ends before costs one read of /proc/self."""


def _waited(pid: int) -> float | None:
    """Seconds the process `pid` has spent ready to run but waiting for a CPU, since it started."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def _servers() -> list[psutil.Process]:
    """The host's processes: its descendants (its warm Python among them), and the warm Python lent to it with its
    children."""
    lent = lent_to_us()
    found = []
    for root in (os.getpid(), lent.pid if lent is not None else None):
        if root is None:
            continue
        try:
            process = psutil.Process(root)
            found += ([process] if root != os.getpid() else []) + process.children(recursive=True)
        except psutil.Error:
            continue
    return found


class _Starvation:
    """How long, since it was made, the host or any one of its processes waited for a CPU (the longest of them)."""

    def __init__(self) -> None:
        self.since = time.time()
        self.own = _waited(os.getpid())
        self.seen: dict[int, float] = {}

    def seconds(self) -> float:
        own = _waited(os.getpid())
        waits = [own - self.own] if own is not None and self.own is not None else []
        for process in _servers():
            waited = _waited(process.pid)
            if waited is None:
                continue
            if process.pid not in self.seen:
                try:  # one started since: all its waiting counts; one that was there: only from now on
                    self.seen[process.pid] = 0.0 if process.create_time() >= self.since else waited
                except psutil.Error:
                    continue
            waits.append(waited - self.seen[process.pid])
        return max(waits, default=0.0)


class _Window:
    """A limit's window: when it began, how long its processes waited for a CPU, and how busy the machine was."""

    def __init__(self, limit: float) -> None:
        self.limit, self.began, self.pressure = limit, time.monotonic(), cpu_pressure()
        self.starvation = _Starvation()

    def credit(self) -> float:
        """How far the limit is moved on: the time its processes waited for a CPU, at most `_MOST_TIMES` the limit."""
        return min(self.starvation.seconds(), (_MOST_TIMES - 1) * self.limit)

    def busy_note(self) -> str:
        """A sentence for the learner when the machine was busy during the window: its load, the limit and the
        setting to raise (notebook 05); empty when it was not."""
        load, cpus = machine_load()
        elapsed = time.monotonic() - self.began
        pressure = cpu_pressure()
        if pressure is not None and self.pressure is not None and elapsed > 0:
            busy = (pressure - self.pressure) / 1e6 / elapsed >= _BUSY_SHARE
        else:
            busy = load > cpus
        if not busy:
            return ""
        scale = time_scale()
        suggested = math.ceil(scale * max(2.0, load / cpus))
        return _(
            "The machine is busy (load {load:.1f} on {cpus} CPUs): the limit of {limit:g} s ({env}={scale:g}) "
            "passed while programs waited for a CPU. Set {env}={suggested} to give every limit more time."
        ).format(load=load, cpus=cpus, limit=self.limit, env=TIME_SCALE_ENV, scale=scale, suggested=suggested)


class Deadline(_Window):
    """`moving_deadline` for code that polls: `passed()` once `limit` seconds, moved on by the time the host and its
    processes waited for a CPU, have gone by."""

    def passed(self) -> bool:
        elapsed = time.monotonic() - self.began
        return elapsed >= self.limit and elapsed >= self.limit + self.credit()


class MovingDeadline(_Window):
    """The deadline of a block that runs in `scope`: cancelled by its own watcher once `limit` seconds, moved on by the
    time the host and its processes waited for a CPU, and not counting `pause`d time, have gone by. The watcher, not
    a timer, decides: a loop that was blocked past the limit is first asked how long it waited for the CPU."""

    def __init__(self, limit: float) -> None:
        super().__init__(limit)
        self.scope = anyio.CancelScope()
        self._paused_at: float | None = None
        self._paused_for = 0.0

    def pause(self) -> None:
        """Stop the clock: a person's time is not the servers' (`ToolRouter.user_time`)."""
        self._paused_at = time.monotonic()

    def resume(self) -> None:
        if self._paused_at is not None:
            self._paused_for += time.monotonic() - self._paused_at
            self._paused_at = None

    async def watch(self) -> None:
        await anyio.sleep(min(_FIRST_LOOK_S, self.limit / 4))
        await anyio.to_thread.run_sync(self.starvation.seconds)  # the processes already running, as they are now
        while True:
            due = self.began + self._paused_for + self.limit
            await anyio.sleep(max(0.0, due - time.monotonic()))
            if self._paused_at is not None or time.monotonic() < self.began + self._paused_for + self.limit:
                await anyio.sleep(_CHECK_S)
                continue
            if time.monotonic() >= self.began + self._paused_for + self.limit + await anyio.to_thread.run_sync(
                self.credit
            ):
                self.scope.cancel()
                return
            await anyio.sleep(_CHECK_S)


@asynccontextmanager
async def moving_deadline(limit: float) -> AsyncIterator[MovingDeadline]:
    """A deadline `limit` seconds from now for the block, moved on by the time the host and its servers waited for a
    CPU meanwhile, up to `_MOST_TIMES` the limit (notebook 05); `.scope.cancelled_caught` says whether it passed."""
    deadline = MovingDeadline(limit)
    # A task of the loop, not a task group's: a task group would wrap what the block raises in an exception group.
    watcher = asyncio.get_running_loop().create_task(deadline.watch())
    try:
        with deadline.scope:
            yield deadline
    finally:
        watcher.cancel()
