"""Limits for a shared machine: moved on while the servers work but wait for a CPU; a hung server is named as such.

A limit of 30 s means 30 s of a machine that runs the host and its servers when they are ready to run. While a
server works (its processes' CPU time advances) but waits for a CPU (Linux counts it per thread: the second field of
`/proc/PID/task/TID/schedstat`), the limit is moved on by as much, up to `_MOST_TIMES` the limit: a server that is
starting on a crowded CPU is given the time it was kept from; a hung one (blocked in a read or a sleep: its CPU time
does not advance) is given nothing, and the message says it is not answering, however busy the machine.
`LABKIT_TIME_SCALE` scales every limit (`labkit/_time_limits.py`); a limit that passes while a server works on a busy
machine says so, and names that setting.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
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


def _threads_waits(pid: int) -> dict[str, float]:
    """`_waited` for each thread of process `pid`, by thread id (a tool runs in a worker thread: the process's own
    line counts its main thread only)."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return {}
    return {thread: wait for thread in threads if (wait := _waited(pid, thread)) is not None}


def _longest_new_wait(now: dict[str, float], before: dict[str, float]) -> float:
    """The longest any one thread waited for a CPU between two readings of `_threads_waits` (a new thread: all of
    its waiting)."""
    return max((wait - before.get(thread, 0.0) for thread, wait in now.items()), default=0.0)


def _thread_cpu(thread: int) -> float | None:
    """CPU seconds one thread of this process has used (fields 14 and 15 of its `stat`, in clock ticks)."""
    try:
        with open(f"/proc/self/task/{thread}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


class _Work:
    """What the host's servers did since it was made, looked at every `_CHECK_S` at most: the time they waited for a
    CPU while they were working (their CPU time advanced), and when they last worked.

    A server that is working on a crowded CPU is given the time it was kept from; one that is waiting (for a read,
    a sleep, a lock, a reply) uses no CPU time and is given nothing, however busy the machine. The host's own thread
    `host` (its event loop), when given, counts as one of them: between a server's answer and the next request, the
    work is the host's."""

    def __init__(self, host: int | None = None) -> None:
        self.since = self.last = self.worked_at = time.monotonic()
        self.host = host
        self.credit = 0.0
        self.processes = 0
        """How many of the host's server processes were alive at the last look (none: nothing to tell from)."""
        self.cpu: dict[int, float] = {}
        self.waits: dict[int, dict[str, float]] = {}
        """Both by pid, and the host's thread under key 0."""

    def look(self, *, every: float = _CHECK_S) -> None:
        now = time.monotonic()
        if now - self.last < every:
            return
        cpu: dict[int, float] = {}
        waits: dict[int, dict[str, float]] = {}
        for process in _servers():
            try:
                with process.oneshot():
                    cpu[process.pid] = sum(process.cpu_times()[:2])
                    created = process.create_time()
            except psutil.Error:
                continue
            waits[process.pid] = _threads_waits(process.pid)
            if process.pid not in self.cpu and created < time.time() - (now - self.last):
                self.cpu[process.pid], self.waits[process.pid] = cpu[process.pid], waits[process.pid]
        servers = len(cpu)
        working = [pid for pid in cpu if cpu[pid] > self.cpu.get(pid, 0.0)]
        if self.host is not None and (used := _thread_cpu(self.host)) is not None:
            cpu[0], waits[0] = used, {str(self.host): _waited(os.getpid(), str(self.host)) or 0.0}
            # Two clock ticks: more than the watcher's own wake-ups, which run on that thread too.
            if 0 in self.cpu and used - self.cpu[0] >= 2 / os.sysconf("SC_CLK_TCK"):
                working.append(0)
        if working or not servers:  # no process of its own to look at (a remote server): the host's waiting counts
            self.worked_at = now if working else self.worked_at
            waited = max(
                (_longest_new_wait(waits[key], self.waits[key]) for key in (working or [0]) if key in self.waits),
                default=0.0,
            )
            self.credit += min(max(0.0, waited), now - self.last)
        self.cpu, self.waits, self.last, self.processes = cpu, waits, now, servers

    def idle_for(self) -> float:
        """Seconds since the servers or the host last worked, when the servers have processes; 0 when they have
        none."""
        return time.monotonic() - self.worked_at if self.processes else 0.0


class _Window:
    """A limit's window: when it began, how long its working processes waited for a CPU, and how busy the machine
    was."""

    def __init__(self, limit: float, host: int | None = None) -> None:
        self.limit, self.began = limit, time.monotonic()
        self.work = _Work(host)
        self.crowding: _Crowding | None = None
        """Looked at when the window's processes are first looked at (not on every call: a call that ends soon
        never needs it)."""

    def look(self) -> None:
        """Note what the processes running now have used and waited so far, to count from here on."""
        self.work.look(every=0.0)
        self.crowding = _Crowding()

    def credit(self, *, now: bool = False) -> float:
        """How far the limit is moved on: the time its processes waited for a CPU while they worked, at most
        `_MOST_TIMES` the limit; as of the last look (every `_CHECK_S`), or of a look `now`."""
        self.work.look(every=0.0 if now else _CHECK_S)
        return min(self.work.credit, (_MOST_TIMES - 1) * self.limit)

    def waited(self) -> float:
        """How long the window has lasted so far."""
        return time.monotonic() - self.began

    def cause(self) -> str:
        """Why the limit passed, as far as the machine tells: "hung" when the servers' processes are alive but used
        no CPU time at the end of the wait, "busy" when the machine was busy while they worked, else ""."""
        self.work.look(every=0.0)
        if self.work.idle_for() >= _CHECK_S:
            return "hung"
        return "busy" if self._crowding() >= _BUSY_WAITING else ""

    def _crowding(self) -> float:
        waiting = self.crowding.waiting() if self.crowding is not None else None
        if waiting is None:
            load, cpus = machine_load()
            waiting = max(0.0, load - cpus) / cpus
        return waiting

    def busy_note(self) -> str:
        """A sentence for the learner when the limit passed (notebook 05): that the server is not answering, when
        its processes used no CPU time at the end of the wait (a busy machine does not explain it); that the machine
        was busy, with its load, the limit and the setting to raise; empty when neither."""
        cause = self.cause()
        if cause == "hung":
            return _(
                "The server is not answering: its processes are alive but used no CPU time in the last {idle:.0f} s "
                "of the wait, so it is waiting for something (a read, a sleep, a lock), not working slowly; more "
                "time ({env}) would not help."
            ).format(idle=max(self.work.idle_for(), 1.0), env=TIME_SCALE_ENV)
        if cause != "busy":
            return ""
        waiting = self._crowding()
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
        # Looked at every `_CHECK_S` of the wait, not only once the limit has passed; and again before it ends.
        return time.monotonic() - self.began >= self.limit + self.credit() and (
            time.monotonic() - self.began >= self.limit + self.credit(now=True)
        )


class MovingDeadline(_Window):
    """The deadline of a block that runs in `scope`: cancelled by its own watcher once `limit` seconds, moved on by the
    time the host and its processes waited for a CPU, and not counting `pause`d time, have gone by. The watcher, not
    a timer, decides: a loop that was blocked past the limit is first asked how long it waited for the CPU."""

    def __init__(self, limit: float) -> None:
        super().__init__(limit, host=threading.get_native_id())  # made on the event loop's thread
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
            # Looked at every `_CHECK_S` all along: whether the servers work is known for each stretch of the wait.
            left = self.began + self._paused_for + self.limit - time.monotonic()
            await anyio.sleep(min(_CHECK_S, left) if left > 0 else _CHECK_S)
            credit = await anyio.to_thread.run_sync(self.credit)
            if self._paused_at is not None or time.monotonic() < self.began + self._paused_for + self.limit + credit:
                continue
            credit = await anyio.to_thread.run_sync(lambda: self.credit(now=True))  # what they did since the last look
            if time.monotonic() >= self.began + self._paused_for + self.limit + credit:
                self.scope.cancel()
                return


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
