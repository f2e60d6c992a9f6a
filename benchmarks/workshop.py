"""Figure 7: an HTTP logs+charts pair shared by N simulated learners, then two charts replicas sharing one key."""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable, Coroutine
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import Client, MCPError
from mcp_types import CallToolResult, ElicitResult, Implementation, InputRequiredResult, InputResponses

from labkit.host import http_server

from .stats import percentile

__all__ = ["SCALES", "measure_workshop"]

SCALES = (1, 10, 50)
ARGUMENTS = {"service": "order-service", "since": "2026-10-29T20:00"}
_ANSWER = {"space": "personal"}
_MIN_TASKS = 5
"""Each configuration runs at least this many tasks: one learner repeats the task, many do it once."""


@dataclass
class _Tally:
    """What the learners of one configuration did: task latencies and how each call went."""

    tasks: list[float] = field(default_factory=list)
    queries: list[float] = field(default_factory=list)
    charts: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


async def measure_workshop(scales: tuple[int, ...] = SCALES, phase_timeout: float = 150.0) -> dict[str, Any]:
    """Each learner: `query_errors`, then `render_error_trend` with its input_required round answered."""
    with ExitStack() as servers:
        errlog = servers.enter_context(tempfile.TemporaryFile(mode="w+"))
        # One after the other, from this thread: a server's supervisor dies with the thread that started it (Linux's
        # parent-death signal follows the thread), so servers started from a pool's threads died with the pool.
        logs, charts_a, charts_b, stranger = (
            servers.enter_context(server)
            for server in (
                http_server("logs", errlog=errlog),
                http_server("charts", errlog=errlog),
                http_server("charts", errlog=errlog),
                # A replica with its own key: the control that shows the shared key is what makes retries work.
                http_server("charts", env={"LABKIT_REQUEST_STATE_KEY": os.urandom(32).hex()}, errlog=errlog),
            )
        )
        await _warm_up(charts_a, charts_b)
        single = {n: await _configuration(n, phase_timeout, _single_server(logs, charts_a)) for n in scales}
        replicas = {n: await _configuration(n, phase_timeout, _two_replicas(logs, charts_a, charts_b)) for n in scales}
        control = await _other_key_rejects(charts_a, stranger)
        shared_name = await _shared_client_name(logs, calls=max(scales))
    return {
        "single_server": single,
        "two_replicas": replicas,
        "retry_on_replica_with_other_key": control,
        "default_client_name_probe": shared_name,
    }


Learner = Callable[[int, int, anyio.Event, Callable[[], None], _Tally], Coroutine[Any, Any, None]]


async def _configuration(n: int, timeout: float, learner: Learner) -> dict[str, Any]:
    """Connect n learners, release them together, and time every task until all are done."""
    tally = _Tally()
    repeats = math.ceil(_MIN_TASKS / n)
    start, connected = anyio.Event(), [0]

    def arrived() -> None:
        connected[0] += 1
        if connected[0] == n:
            start.set()

    released = 0.0
    with anyio.fail_after(timeout):
        async with anyio.create_task_group() as group:
            for index in range(n):
                group.start_soon(learner, index, repeats, start, arrived, tally)
            await start.wait()
            released = time.perf_counter()
    wall = time.perf_counter() - released
    done = len(tally.tasks)
    return {
        "learners": n,
        "tasks": done,
        "errors": len(tally.errors),
        "first_error": tally.errors[0] if tally.errors else None,
        "wall_s": round(wall, 3),
        "tasks_per_s": round(done / wall, 2) if wall else None,
        "p50_ms": round(percentile(tally.tasks, 50) * 1000, 1),
        "p99_ms": round(percentile(tally.tasks, 99) * 1000, 1),
        "query_p50_ms": round(percentile(tally.queries, 50) * 1000, 1),
        "chart_p50_ms": round(percentile(tally.charts, 50) * 1000, 1),
    }


async def _answer(context: Any, params: Any) -> ElicitResult:
    """The learner's answer to the charts server's question (the scripted user: personal space)."""
    return ElicitResult(action="accept", content=dict(_ANSWER))


def _identity(role: str, index: int) -> Implementation:
    # Each learner is its own caller: the logs server limits calls per clientInfo name.
    return Implementation(name=f"{role}-learner-{index:02d}", version="1.0")


def _single_server(logs_url: str, charts_url: str) -> Learner:
    async def learner(index: int, repeats: int, start: anyio.Event, arrived: Callable[[], None], tally: _Tally) -> None:
        me = _identity("single", index)
        async with (
            Client(logs_url, client_info=me) as logs,
            Client(charts_url, client_info=me, elicitation_callback=_answer) as charts,
        ):
            await logs.list_tools()
            await charts.list_tools()
            arrived()
            await start.wait()
            for _ in range(repeats):
                began = time.perf_counter()
                query = await logs.call_tool("query_errors", ARGUMENTS)
                queried = time.perf_counter()
                chart = await charts.call_tool("render_error_trend", ARGUMENTS)  # the SDK runs both rounds
                _count(tally, began, queried, time.perf_counter(), query, chart)

    return learner


def _two_replicas(logs_url: str, url_a: str, url_b: str) -> Learner:
    async def learner(index: int, repeats: int, start: anyio.Event, arrived: Callable[[], None], tally: _Tally) -> None:
        me = _identity("replica", index)
        first_url, second_url = (url_a, url_b) if index % 2 == 0 else (url_b, url_a)
        async with (
            Client(logs_url, client_info=me) as logs,
            Client(first_url, client_info=me, elicitation_callback=_answer) as first,
            Client(second_url, client_info=me, elicitation_callback=_answer) as second,
        ):
            for client in (logs, first, second):
                await client.list_tools()
            arrived()
            await start.wait()
            for _ in range(repeats):
                began = time.perf_counter()
                query = await logs.call_tool("query_errors", ARGUMENTS)
                queried = time.perf_counter()
                try:
                    chart = await _round_one_here_retry_there(first, second)
                except MCPError as error:
                    tally.errors.append(f"render_error_trend: MCPError {error.error.code} {error.error.message}")
                    continue
                _count(tally, began, queried, time.perf_counter(), query, chart)

    return learner


async def _round_one_here_retry_there(first: Client, second: Client) -> CallToolResult:
    """Round 1 on one replica, the answered retry on the other: the 2026-07-28 stateless promise.

    Both clients declare form elicitation (an `elicitation_callback`), without which the server may not ask.
    """
    asked = await first.session.call_tool("render_error_trend", ARGUMENTS, allow_input_required=True)
    if not isinstance(asked, InputRequiredResult):
        raise RuntimeError(f"expected input_required from round 1, got {type(asked).__name__}")
    answers: InputResponses = {
        key: await _answer(None, request.params) for key, request in (asked.input_requests or {}).items()
    }
    result = await second.session.call_tool(
        "render_error_trend",
        ARGUMENTS,
        input_responses=answers,
        request_state=asked.request_state,
        allow_input_required=True,
    )
    if not isinstance(result, CallToolResult):
        raise RuntimeError(f"expected the chart after the retry, got {type(result).__name__}")
    return result


def _count(
    tally: _Tally, began: float, queried: float, ended: float, query: CallToolResult, chart: CallToolResult
) -> None:
    for name, result in (("query_errors", query), ("render_error_trend", chart)):
        if result.is_error:
            text = " ".join(block.text for block in result.content if block.type == "text")
            tally.errors.append(f"{name}: {text[:160]}")
            return
    tally.tasks.append(ended - began)
    tally.queries.append(queried - began)
    tally.charts.append(ended - queried)


async def _warm_up(url_a: str, url_b: str) -> None:
    """One chart on each replica first: the first render imports matplotlib (about a second)."""
    async with Client(url_a, elicitation_callback=_answer) as a, Client(url_b, elicitation_callback=_answer) as b:
        for client in (a, b):
            await client.list_tools()
        await _round_one_here_retry_there(a, b)
        await _round_one_here_retry_there(b, a)


async def _other_key_rejects(url_a: str, stranger_url: str) -> dict[str, Any]:
    """Round 1 on a replica, retry on a server with a different sealing key: it must refuse."""
    async with (
        Client(url_a, elicitation_callback=_answer) as first,
        Client(stranger_url, elicitation_callback=_answer) as stranger,
    ):
        await stranger.list_tools()
        try:
            await _round_one_here_retry_there(first, stranger)
        except MCPError as error:
            return {"rejected": True, "code": error.error.code, "message": error.error.message}
    return {"rejected": False}


async def _shared_client_name(logs_url: str, calls: int) -> dict[str, Any]:
    """`calls` learners who all kept the SDK's default clientInfo name, one query each, at once."""
    limited = [0]

    async def one() -> None:
        async with Client(logs_url) as client:
            result = await client.call_tool("query_errors", ARGUMENTS)
            limited[0] += bool(result.is_error and "rate limit" in str(result.content))

    async with anyio.create_task_group() as group:
        for _ in range(calls):
            group.start_soon(one)
    return {"learners": calls, "client_name": "mcp (SDK default)", "rate_limited": limited[0]}
