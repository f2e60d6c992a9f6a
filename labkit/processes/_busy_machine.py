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
from .._time_limits import TIME_SCALE_ENV, machine_load, time_scale, usable_cpus
from .._warm import lent_to_us

__all__ = ["Deadline", "MovingDeadline", "longest", "moving_deadline"]

_MOST_TIMES = 10
"""A limit is moved on to at most this many times itself, however long its processes waited for a CPU: a server
spinning in a loop on a crowded machine still ends."""
_CHECK_S = 0.5
_BUSY_WAITING = 0.5
"""A machine is busy when, on average over a limit's time, this many programs or more were waiting for each CPU the
lab may use: counted as the time every thread it can see spent ready to run but not running (Linux's schedstat),
else from the load average. Counted, not sampled: a CPU crowded by four programs reads as crowded every time."""
_SHORTEST_LOOK_S = 0.2
_FIRST_LOOK_S = 1.0
"""When the processes already running are first looked at: a call that ends before costs one read of /proc/self."""


def longest(limit: float) -> float:
    """The furthest a limit of `limit` seconds can be moved on: what a limit inside it must allow, so that the moving
    one is the one that ends the wait (notebook 05)."""
    return limit * _MOST_TIMES


def _waited(pid: int | str, thread: str = "") -> float | None:
    """Seconds the process `pid` (or one of its threads) has spent ready to run but waiting for a CPU, since it
    started."""
    try:
        with open(f"/proc/{pid}/task/{thread}/schedstat" if thread else f"/proc/{pid}/schedstat", "rb") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return None


def _every_threads_wait() -> dict[str, float] | None:
    """`_waited` for every thread this process can see (its container's, in a container), by thread id; None where
    the system does not say (no /proc, as on macOS)."""
    waits = {}
    try:
        pids = [pid for pid in os.listdir("/proc") if pid.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # ended since
        for thread in threads:
            if (waited := _waited(pid, thread)) is not None:
                waits[thread] = waited
    return waits or None


class _Crowding:
    """How many programs, on average since it was made, were waiting for each CPU the lab may use."""

    def __init__(self) -> None:
        self.since, self.waits = time.monotonic(), _every_threads_wait()

    def waiting(self) -> float | None:
        """Programs waiting per usable CPU since `since`; None where the system does not say, or too soon to tell."""
        now, waits = time.monotonic(), _every_threads_wait()
        if self.waits is None or waits is None or now - self.since < _SHORTEST_LOOK_S:
            return None
        # A thread started since counts all its waiting; one that ended since is not counted (it cannot be read).
        waited = sum(wait - self.waits.get(thread, 0.0) for thread, wait in waits.items())
        return max(0.0, waited) / (now - self.since) / usable_cpus()


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
        self.limit, self.began = limit, time.monotonic()
        self.starvation = _Starvation()
        self.crowding: _Crowding | None = None
        """Looked at when the window's processes are first looked at (not on every call: a call that ends soon
        never needs it)."""

    def look(self) -> None:
        """Note what the processes running now have waited so far, to count from here on."""
        self.starvation.seconds()
        self.crowding = _Crowding()

    def credit(self) -> float:
        """How far the limit is moved on: the time its processes waited for a CPU, at most `_MOST_TIMES` the limit."""
        return min(self.starvation.seconds(), (_MOST_TIMES - 1) * self.limit)

    def busy_note(self) -> str:
        """A sentence for the learner when the machine was busy during the window: its load, the limit and the
        setting to raise (notebook 05); empty when it was not."""
        waiting = self.crowding.waiting() if self.crowding is not None else None
        if waiting is None:
            load, cpus = machine_load()
            waiting = max(0.0, load - cpus) / cpus
        if waiting < _BUSY_WAITING:
            return ""
        scale = time_scale()
        suggested = math.ceil(scale * max(2.0, 1 + waiting))
        return _(
            "The machine is busy ({waiting:.1f} programs at a time waited for each CPU the lab may use): the limit "
            "of {limit:g} s ({env}={scale:g}) passed while programs waited for a CPU. Set {env}={suggested} to give "
            "every limit more time."
        ).format(waiting=waiting, limit=round(self.limit, 1), env=TIME_SCALE_ENV, scale=scale, suggested=suggested)


class Deadline(_Window):
    """`moving_deadline` for code that polls: `passed()` once `limit` seconds, moved on by the time the host and its
    processes waited for a CPU, have gone by."""

    def __init__(self, limit: float) -> None:
        super().__init__(limit)
        self.look()

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
        await anyio.to_thread.run_sync(self.look)  # the processes already running, as they are now
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
