"""Figure 1: what the lab's wire taps cost per `tools/call`, against the bare SDK client, on each transport."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client._memory import InMemoryTransport  # the SDK's own stream transport (private module in 2.3.0)
from mcp.client.stdio import stdio_client

from labkit.host import http_server, http_transport, memory_transport, stdio_params, stdio_transport
from labkit.trace import Trace

from .stats import compare, time_interleaved

__all__ = ["CALL", "TARGETS", "measure_tracing", "one_cpu"]

CALL = ("query_errors", {"service": "order-service", "since": "2026-10-29T20:00"})
"""The canonical task's first call: a real lab tool with text and structured content."""
TARGETS = {"memory": 1.15, "stdio": 1.05, "http": 1.05}
_NO_RATE_LIMIT = ("--rate-limit", "1000000000")


async def measure_tracing(samples: int, warmup: int) -> dict[str, Any]:
    """Median `tools/call` latency per transport: bare SDK client, traced lab client, and a second bare
    client as a control (its ratio to the first is the noise floor); samples interleaved, after a warm-up."""
    results: dict[str, Any] = {}
    with one_cpu():
        for transport in ("memory", "stdio", "http"):
            async with _clients(transport) as (bare, traced, control, trace):
                probes = [_probe(bare), _probe(traced), _probe(control)]
                bare_s, traced_s, control_s = await time_interleaved(probes, samples, warmup)
            comparison = compare(bare_s, traced_s)
            results[transport] = {
                **comparison.as_dict(),
                "control_ratio": round(compare(bare_s, control_s).ratio, 4),
                "target_ratio": TARGETS[transport],
                "meets_target": comparison.ratio <= TARGETS[transport],
                "trace_events": len(trace),
            }
    return results


@contextmanager
def one_cpu() -> Iterator[int | None]:
    """Pin this process, and the servers it starts meanwhile, to one CPU; restore the old set afterwards.

    On a busy 2-core machine the scheduler otherwise places each server process differently, and
    two identical stdio servers differ by up to 25 % (measured); on one CPU they agree within a few %.
    """
    if not hasattr(os, "sched_setaffinity"):
        yield None
        return
    allowed = os.sched_getaffinity(0)
    cpu = max(allowed)
    os.sched_setaffinity(0, {cpu})
    try:
        yield cpu
    finally:
        os.sched_setaffinity(0, allowed)


def _probe(client: Client):
    name, arguments = CALL

    async def call() -> None:
        result = await client.call_tool(name, arguments)
        if result.is_error:
            raise RuntimeError(f"{name} failed during the benchmark: {result.content}")

    return call


@asynccontextmanager
async def _clients(transport: str) -> AsyncIterator[tuple[Client, Client, Client, Trace]]:
    """Bare SDK client, traced lab client (`labkit.host` transports), and a second bare client, to the logs server.

    Every server writes its inside events to a file of its own, as under `Host`; only the traced
    client's tap reads them. In memory the three share one server (no events file); over stdio
    and HTTP each client gets its own server process, pinned to the same CPU (`one_cpu`).
    """
    trace = Trace()
    async with AsyncExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-tap-")))
        events = {role: folder / f"{role}-events.jsonl" for role in ("bare", "traced", "control")}
        env = {role: {"LABKIT_EVENTS_FILE": str(path)} for role, path in events.items()}
        errlog = stack.enter_context(tempfile.TemporaryFile(mode="w+"))  # noqa: SIM115 - the stack closes it
        if transport == "memory":
            from servers.logs import build_server

            server = build_server(rate_limit=10**9)
            bare: Any = InMemoryTransport(server)
            control: Any = InMemoryTransport(server)
            traced: Any = memory_transport(server, trace)
        elif transport == "stdio":
            bare, control = (
                stdio_client(stdio_params("logs", *_NO_RATE_LIMIT, env=env[role]), errlog=errlog)
                for role in ("bare", "control")
            )
            traced = stdio_transport(
                "logs", trace, *_NO_RATE_LIMIT, env=env["traced"], errlog=errlog, server_events=events["traced"]
            )
        else:
            urls = {
                role: stack.enter_context(http_server("logs", *_NO_RATE_LIMIT, env=env[role], errlog=errlog))
                for role in ("bare", "traced", "control")
            }
            bare, control = urls["bare"], urls["control"]  # Client(str) is the SDK's plain streamable_http_client
            traced = http_transport(urls["traced"], trace, server="logs", server_events=events["traced"])
        clients = [await stack.enter_async_context(Client(t)) for t in (bare, traced, control)]
        yield clients[0], clients[1], clients[2], trace
