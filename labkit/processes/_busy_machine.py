"""Limits for a shared machine: moved on while the servers wait for a CPU; a hung or a computing server is named.

A limit of 30 s means 30 s of a machine that runs the host and its servers when they are ready to run. Linux counts,
per thread, the time it ran on a CPU and the time it was ready to run but waited for one (the first two fields of
`/proc/PID/task/TID/schedstat`). While a server works (its threads are ready to run: on a CPU or waiting for one),
the limit is moved on by the time it waited, up to `_MOST_TIMES` the limit: a server that is starting on a crowded CPU
is given the time it was kept from; a hung one (blocked in a read or a sleep: it neither runs nor waits for a CPU) is
given nothing, and the message says it is not answering, however busy the machine. What the limit counts is then the
server's own time: a server that ran on a CPU all along (computing, or looping for ever) ends at the limit's worth of
its CPU time, and the message says it was computing, not that the machine is busy. Which it was is judged from the
server's processes alone, never from the host's (whose own thread runs the judging).
`LABKIT_TIME_SCALE` scales every limit (`labkit/_time_limits.py`); a limit that was moved on as far as it goes while
a server waited for a CPU says so, and names the setting with the value the measured waiting calls for.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Literal

import anyio
import psutil

from .._i18n import _
from .._time_limits import TIME_SCALE_ENV, machine_load, time_scale
from .._warm import lent_to_us

__all__ = ["Deadline", "MovingDeadline", "longest", "moving_deadline"]

_MOST_TIMES = 10
"""A limit is moved on to at most this many times itself, however long its processes waited for a CPU: a server
spinning in a loop on a crowded machine still ends."""
_CHECK_S = 0.5
_SHORTEST_LOOK_S = 0.2
"""Looks closer together than this are not told apart: over a shorter stretch one wake-up of a blocked server (a
timer's tick, a keep-alive) would read as work."""
_WORKING = 0.1
"""A server works over a stretch when its threads were ready to run (on a CPU or waiting for one) at least this share
of it: a working thread is ready nearly all the time, a blocked one only for its wake-ups."""
_BUSY_WAITING = 0.5
"""A machine is busy for a server when, while it worked, it waited this long or longer for a CPU for every second it
ran on one: as many programs at a time as that ratio were ahead of it on its CPU."""
_READS_WAITING = os.path.exists("/proc/self/schedstat")
"""Whether the system says how long a thread waited for a CPU (Linux); where not (macOS), the load average tells how
busy the machine is."""
_COMPUTING = 0.9
"""A server computed all along when it worked in at least this share of the time it was watched: never blocked in a
read, a sleep or a lock for longer than a look."""
_FIRST_LOOK_S = 1.0
"""When the processes already running are first looked at: a call that ends before costs one read of /proc/self."""

Cause = Literal["hung", "computing", "busy", ""]
Tree = int | tuple[int, ...] | None
"""Whose processes a limit watches: a process and its descendants (a pid), several (none: a server on another
machine, with no process here), or None for all the host's."""


def longest(limit: float) -> float:
    """The furthest a limit of `limit` seconds can be moved on: what a limit inside it must allow, so that the moving
    one is the one that ends the wait (notebook 05)."""
    return limit * _MOST_TIMES


def _schedstat(pid: int, thread: str) -> tuple[float, float] | None:
    """Seconds one thread of process `pid` has run on a CPU, and has been ready to run but waited for one, since it
    started."""
    try:
        with open(f"/proc/{pid}/task/{thread}/schedstat", "rb") as stat:
            ran, waited = stat.read().split()[:2]
        return int(ran) / 1e9, int(waited) / 1e9
    except (OSError, ValueError):
        return None


def _threads(process: psutil.Process) -> dict[str, tuple[float, float]]:
    """`_schedstat` for each thread of `process`, by thread id; where the system does not say (no /proc, as on macOS),
    the process as one thread: its CPU time, and no waiting."""
    try:
        threads = os.listdir(f"/proc/{process.pid}/task")
    except OSError:
        threads = []
    found = {thread: times for thread in threads if (times := _schedstat(process.pid, thread)) is not None}
    if found or threads:
        return found
    try:
        return {f"pid {process.pid}": (sum(process.cpu_times()[:2]), 0.0)}
    except psutil.Error:
        return {}


def _started_after(process: psutil.Process, moment: float) -> bool:
    try:
        return process.create_time() > moment
    except psutil.Error:
        return False


def _servers(tree: Tree = None) -> list[psutil.Process]:
    """The processes of `tree` with their descendants, when given; else the host's processes: its descendants (its
    warm Python among them), and the warm Python lent to it with its children."""
    if tree is None:
        lent = lent_to_us()
        roots: tuple[int, ...] = (os.getpid(), *((lent.pid,) if lent is not None else ()))
    else:
        roots = (tree,) if isinstance(tree, int) else tree
    found = []
    for root in roots:
        try:
            process = psutil.Process(root)
            found += ([process] if root != os.getpid() else []) + process.children(recursive=True)
        except psutil.Error:
            continue
    return found


@dataclass
class _Stretch:
    """What a set of threads did between two looks: seconds run on a CPU, seconds waited for one (all of them), and
    the longest any one of them waited."""

    ran: float = 0.0
    waited: float = 0.0
    longest_wait: float = 0.0

    @classmethod
    def between(
        cls, before: dict[str, tuple[float, float]], now: dict[str, tuple[float, float]], span: float
    ) -> _Stretch:
        """A thread first seen now counts from its start, at most `span` (it may have begun before the last look);
        one that ended since is not counted (it cannot be read)."""
        stretch = cls()
        for thread, (ran, waited) in now.items():
            ran_before, waited_before = before.get(thread, (0.0, 0.0))
            ran, waited = min(max(0.0, ran - ran_before), span), min(max(0.0, waited - waited_before), span)
            stretch.ran, stretch.waited = stretch.ran + ran, stretch.waited + waited
            stretch.longest_wait = max(stretch.longest_wait, waited)
        return stretch

    def working(self, span: float) -> bool:
        return self.ran + self.waited >= _WORKING * span


class _Work:
    """What the host's servers (those of `tree`, when given) did since it was made, looked at every `_CHECK_S` at
    most: the time they waited for a CPU while they were working, how long they ran and waited in all, and when they
    last worked.

    A server that is working on a crowded CPU is given the time it was kept from; one that is waiting (for a read,
    a sleep, a lock, a reply) neither runs nor waits for a CPU and is given nothing, however busy the machine. The
    host's own thread `host` (its event loop), when given, is given the time it was kept from too (between a server's
    answer and the next request, the work is the host's), but whether the servers work is theirs alone to show."""

    def __init__(self, host: int | None = None, tree: Tree = None) -> None:
        self.since = self.last = self.worked_at = time.monotonic()
        self.host, self.tree = host, tree
        self.credit = 0.0
        self.worked = _Stretch()
        """The servers' running and waiting, summed over the stretches in which they worked."""
        self.watched = self.working_for = 0.0
        """Seconds the servers were looked at since the first look, and how many of them they worked in."""
        self.processes = 0
        """How many of the host's server processes were alive at the last look (none: nothing to tell from)."""
        self.threads: dict[str, tuple[float, float]] | None = None
        """The servers' threads at the last look (None before the first), and the host's under key "host"."""

    def look(self, *, every: float = _CHECK_S) -> None:
        now = time.monotonic()
        first = self.threads is None
        if not first and now - self.last < max(every, _SHORTEST_LOOK_S):
            return
        servers = _servers(self.tree)
        threads: dict[str, tuple[float, float]] = {}
        started_since: set[str] = set()  # at the first look: threads of processes started since it was made
        for process in servers:
            threads |= (found := _threads(process))
            if first and _started_after(process, time.time() - (now - self.since)):
                started_since |= found.keys()
        host = _schedstat(os.getpid(), str(self.host)) if self.host is not None else None
        before = (
            self.threads if self.threads is not None else {k: v for k, v in threads.items() if k not in started_since}
        )
        span = now - self.last
        servers_did = _Stretch.between(before, threads, span)
        host_did = (
            _Stretch.between(before, {"host": host}, span) if host is not None and "host" in before else _Stretch()
        )
        if not first:
            self.watched += span
        if servers_did.working(span):
            self.working_for += span if not first else 0.0
            self.worked_at = now
            self.worked = _Stretch(self.worked.ran + servers_did.ran, self.worked.waited + servers_did.waited)
        # With no process of its own to look at (a remote server), the host's waiting is all there is to count.
        host_counts = host_did.working(span) or not servers
        counted = [
            stretch for stretch, counts in ((servers_did, servers_did.working(span)), (host_did, host_counts)) if counts
        ]
        self.credit += max((stretch.longest_wait for stretch in counted), default=0.0)
        self.threads = threads | ({"host": host} if host is not None else {})
        self.last, self.processes = now, len(servers)

    def computed_all_along(self) -> bool:
        """Whether the servers worked (ran or waited for a CPU) in nearly every stretch they were watched."""
        return self.watched > 0 and self.working_for >= _COMPUTING * self.watched

    def idle_for(self) -> float:
        """Seconds since the servers last worked, when they have processes; 0 when they have none."""
        return time.monotonic() - self.worked_at if self.processes else 0.0


@dataclass(frozen=True)
class _Verdict:
    """Why a limit passed, judged once when it passed: `cause` is "hung" when the servers' processes are alive but
    neither ran nor waited for a CPU at the end of the wait; "computing" when they worked all along (they ran, or
    were ready to run, the whole wait: their own CPU time is what the limit counted) and ran `_WORKING` of the limit
    or more; "busy" when, working part of
    the time, they waited for a CPU `_BUSY_WAITING` or more for every second they ran; else "".
    `waiting` is that ratio, `idle` how long they had not worked, `ran` and `waited` their seconds on a CPU and
    waiting for one, `moved_to_the_end` whether the limit could move no further."""

    cause: Cause
    waiting: float
    idle: float
    ran: float = 0.0
    waited: float = 0.0
    moved_to_the_end: bool = False


class _Window:
    """A limit's window: when it began, how long its working processes waited for a CPU, and why it passed."""

    def __init__(self, limit: float, host: int | None = None, tree: Tree = None) -> None:
        self.limit, self.began = limit, time.monotonic()
        self.work = _Work(host, tree)
        self._verdict: _Verdict | None = None

    def look(self) -> None:
        """Note what the processes running now have used and waited so far, to count from here on."""
        self.work.look(every=0.0)

    def credit(self, *, now: bool = False) -> float:
        """How far the limit is moved on: the time its processes waited for a CPU while they worked, at most
        `_MOST_TIMES` the limit; as of the last look (every `_CHECK_S`), or of a look `now`."""
        self.work.look(every=0.0 if now else _CHECK_S)
        return min(self.work.credit, self._furthest())

    def _furthest(self) -> float:
        return (_MOST_TIMES - 1) * self.limit

    def waited(self) -> float:
        """How long the window has lasted so far."""
        return time.monotonic() - self.began

    def cause(self) -> Cause:
        """Why the limit passed, as far as the servers' processes tell (`_Verdict`): "hung", "busy" or ""."""
        return self._judged().cause

    def _judged(self) -> _Verdict:
        # Once: the cause and the note must be the same judgement, and a second look would only see the first.
        if self._verdict is None:
            self.work.look(every=0.0)
            worked, idle = self.work.worked, self.work.idle_for()
            if _READS_WAITING:
                waiting = worked.waited / worked.ran if worked.ran else 0.0
            else:
                load, cpus = machine_load()
                waiting = max(0.0, load - cpus) / cpus
            moved_to_the_end = self.work.credit >= self._furthest()
            cause: Cause = (
                "hung"
                if idle >= _CHECK_S
                else "computing"
                # Seen running, not only waiting: a start kept from a crowded CPU all along computed nothing yet.
                if self.work.computed_all_along() and worked.ran >= _WORKING * self.limit
                else "busy"
                if waiting >= _BUSY_WAITING
                else ""
            )
            self._verdict = _Verdict(cause, waiting, idle, worked.ran, worked.waited, moved_to_the_end)
        return self._verdict

    def busy_note(self) -> str:
        """A sentence for the learner when the limit passed (notebook 05): that the server is not answering, when
        its processes neither ran nor waited for a CPU at the end of the wait (a busy machine does not explain it);
        that the machine was busy, with how crowded it was for them, the limit and the setting to raise; empty when
        neither."""
        verdict = self._judged()
        if verdict.cause == "hung":
            return _(
                "The server is not answering: its processes are alive but used no CPU time in the last {idle:.0f} s "
                "of the wait, so it is waiting for something (a read, a sleep, a lock), not working slowly; more "
                "time ({env}) would not help."
            ).format(idle=max(verdict.idle, 1.0), env=TIME_SCALE_ENV)
        scale = time_scale()
        # The furthest limit is `_MOST_TIMES` the limit; at the share of a CPU the server had (1 s on it for every
        # 1 + waiting s), the limit's worth of CPU time needs 1 + waiting times the limit: the scale that covers it.
        suggested = max(math.ceil(scale * (1 + verdict.waiting) / _MOST_TIMES), math.floor(scale) + 1)
        more_time = (
            _(
                " On this busy machine it waited {times:.1f} s for a CPU for every second it ran, and the limit moves "
                "on no further than {most} times itself: {env}={n} would give it the limit's worth of CPU time."
            ).format(times=verdict.waiting, most=_MOST_TIMES, env=TIME_SCALE_ENV, n=suggested)
            if verdict.moved_to_the_end
            else ""
        )
        if verdict.cause == "computing":
            return _(
                "The server was computing for the whole wait: it ran {ran:.1f} s on a CPU (and waited {waited:.1f} s "
                "for one, not counted against the limit of {limit:g} s) and never waited for a read, a sleep or a "
                "lock. A loop that does not end never answers, whatever the limit; work that ends needs a longer "
                "limit.{more_time}"
            ).format(ran=verdict.ran, waited=verdict.waited, limit=round(self.limit, 1), more_time=more_time)
        if verdict.cause != "busy":
            return ""
        return _(
            "The machine is busy ({waiting:.1f} programs at a time waited for each CPU the lab may use): the limit "
            "of {limit:g} s ({env}={scale:g}) passed while programs waited for a CPU. Set {env}={suggested} to give "
            "every limit more time."
        ).format(
            waiting=verdict.waiting, limit=round(self.limit, 1), env=TIME_SCALE_ENV, scale=scale, suggested=suggested
        )


class Deadline(_Window):
    """`moving_deadline` for code that polls: `passed()` once `limit` seconds, moved on by the time the host's
    processes (or those of `tree`, when given: a server someone else started) waited for a CPU, have gone by."""

    def __init__(self, limit: float, tree: Tree = None) -> None:
        super().__init__(limit, tree=tree)
        self.look()

    def passed(self) -> bool:
        # Looked at every `_CHECK_S` of the wait, not only once the limit has passed; and again before it ends.
        passed = time.monotonic() - self.began >= self.limit + self.credit() and (
            time.monotonic() - self.began >= self.limit + self.credit(now=True)
        )
        if passed:
            self._judged()  # now, before the caller stops the server: what it does then is not what it did
        return passed


class MovingDeadline(_Window):
    """The deadline of a block that runs in `scope`: cancelled by its own watcher once `limit` seconds, moved on by the
    time the host and its processes waited for a CPU, and not counting `pause`d time, have gone by. The watcher, not
    a timer, decides: a loop that was blocked past the limit is first asked how long it waited for the CPU."""

    def __init__(self, limit: float, tree: Tree = None) -> None:
        super().__init__(limit, host=threading.get_native_id(), tree=tree)  # made on the event loop's thread
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
                # Judged before the cancelling: the server then works on the cancellation it is sent.
                await anyio.to_thread.run_sync(self._judged)
                self.scope.cancel()
                return


@asynccontextmanager
async def moving_deadline(limit: float, tree: Tree = None) -> AsyncIterator[MovingDeadline]:
    """A deadline `limit` seconds from now for the block, moved on by the time the host and its servers (those of
    `tree`, when given: the one server called) waited for a CPU meanwhile, up to `_MOST_TIMES` the limit (notebook 05);
    `.scope.cancelled_caught` says whether it passed, and why it did is judged from those servers alone."""
    deadline = MovingDeadline(limit, tree)
    # A task of the loop, not a task group's: a task group would wrap what the block raises in an exception group.
    watcher = asyncio.get_running_loop().create_task(deadline.watch())
    try:
        with deadline.scope:
            yield deadline
    finally:
        watcher.cancel()
