"""The host: one MCP client per server, the model loop, the gate, and the check before delivery."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import ExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp_types import ElicitRequestFormParams, ElicitResult, Implementation, Tool

from ..trace import Trace
from ._audit import AuditLog
from ._config import load_config
from ._conversation import ToolCall, ToolResult
from ._gate import GatePolicy
from ._guards import Guard, LocalTool
from ._launch import ServerSpec, http_server
from ._pool import ServerPool
from ._router import ToolRouter
from ._transports import http_transport, stdio_transport

__all__ = ["ERAS", "HOST_INFO", "Asker", "Elicitor", "Host", "RunResult"]

ERAS = {"2026-07-28": "auto", "2025-11-25": "legacy"}
HOST_INFO = Implementation(name="labkit-host", version="0.1.0")
"""How the host names itself to servers (`clientInfo`); servers use it as the caller's name."""
Elicitor = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Shows a server's question as a form and returns the user's answers, or None to decline."""
Asker = Callable[[str], Awaitable[str]]
"""Shows the model's question to the user and returns the reply."""


@dataclass(frozen=True)
class RunResult:
    """How a run ended: the answer, whether the host delivered it, and why (notebook 03)."""

    answer: str
    delivered: bool
    reason: str
    rounds: int


class Host:
    """Connects to the servers, runs the model loop and decides what happens (notebook 03).

    `async with Host(trace, [ServerSpec("logs"), ServerSpec("charts")]) as host:` starts one real
    server process and one MCP client per server, and lists their tools. `await host.run(task,
    conversation)` then loops: ask the model, gate each proposed call, send it, write the result
    back as data, until the model answers without a call or the round cap stops it.
    """

    def __init__(
        self,
        trace: Trace,
        servers: Sequence[ServerSpec],
        *,
        era: str = "2026-07-28",
        policy: GatePolicy = GatePolicy(),
        elicit: Elicitor | None = None,
        ask_user: Asker | None = None,
        round_cap: int = 8,
        call_timeout: float = 20.0,
        max_result_chars: int = 20_000,
        input_required_max_rounds: int = 10,
        required_tools: Iterable[str] = (),
        guards: Sequence[Guard] = (),
        local_tools: Sequence[LocalTool] = (),
        namespaced: bool = False,
    ) -> None:
        if era not in ERAS:
            raise ValueError(f"era must be one of {sorted(ERAS)}, not {era!r}")
        self.trace = trace
        self.servers = list(servers)
        self.era = era
        self.elicit = elicit
        self.ask_user = ask_user
        self.round_cap = round_cap
        self.input_required_max_rounds = input_required_max_rounds  # form rounds per call (notebook 04)
        self.required_tools = tuple(required_tools)
        self.audit = AuditLog()
        self.pool = ServerPool(trace, guards, namespaced=namespaced)
        self.pool.local.update({local.tool.name: local for local in local_tools})
        self.router = ToolRouter(
            trace, self.audit, policy, self.pool, call_timeout=call_timeout, max_result_chars=max_result_chars
        )
        self._events_dir = Path(tempfile.mkdtemp(prefix="labkit-events-"))
        self._calls = 0

    @classmethod
    def from_config(cls, trace: Trace, path: str | Path, **options: Any) -> "Host":
        """A host for every server in an `mcpServers` JSON file, as desktop hosts and editors write it (notebook 08)."""
        return cls(trace, load_config(path), **options)

    @property
    def tools(self) -> list[Tool]:
        """Every tool the servers listed (after the guards), under the names the model must use."""
        return self.pool.tools

    async def __aenter__(self) -> "Host":
        try:
            for spec in self.servers:
                await self.pool.open(spec.name, partial(self._connect, spec))
            await self.pool.refresh()
        except BaseException:
            await self.pool.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.pool.aclose()

    async def call(self, tool: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        """One call, carried like a model's: gate, guards, the server, the result as data (notebook 02)."""
        self._calls += 1
        return await self.router.execute(ToolCall(f"host-call-{self._calls}", tool, dict(arguments or {})))

    async def run(self, task: str, conversation: Any) -> RunResult:
        """The loop of notebook 03, from the user's question to delivery or the round cap."""
        self.trace.round = 1
        self.trace.record("user", "host", "user.ask", task, payload={"text": task})
        conversation.add_user(task)
        for round_no in range(1, self.round_cap + 1):
            self.trace.round = round_no
            turn = await conversation.ask()
            if not turn.tool_calls:
                if self._asks_back(turn.text):
                    answer = await self._relay_question(turn.text)
                    conversation.add_user(answer)
                    continue
                return self._deliver(turn.text, round_no)
            results = await self._execute_together(turn.tool_calls)
            self.trace.record(
                "host", "host", "host.writeback",
                f"wrote {len(results)} result(s) back to the model as data",
                payload=[r.__dict__ for r in results],
            )
            conversation.add_tool_results(results)
        reason = f"stopped after {self.round_cap} rounds: the model kept calling tools"
        self.trace.record("host", "user", "host.stop", reason)
        return RunResult("", False, reason, self.round_cap)

    async def _execute_together(self, calls: Sequence[ToolCall]) -> list[ToolResult]:
        """The calls of one turn are independent, so they run at the same time; results keep the model's order."""
        if len(calls) == 1:
            # A restart after a crash (notebook 05) opens the new connection in the calling task, so a
            # lone call stays in the host's own task; a connection supervised in a task of its own lifts this.
            return [await self.router.execute(calls[0])]
        results: list[ToolResult] = [ToolResult(call.id, "", True) for call in calls]

        async def execute(index: int, call: ToolCall) -> None:
            results[index] = await self.router.execute(call)

        async with anyio.create_task_group() as group:
            for index, call in enumerate(calls):
                group.start_soon(execute, index, call)
        return results

    def _asks_back(self, text: str) -> bool:
        # An answer before the task's work is done that contains a question is the model asking back.
        return self.ask_user is not None and "?" in text and self._missing_work() != []

    async def _relay_question(self, question: str) -> str:
        assert self.ask_user is not None
        self.trace.record("host", "user", "host.relay", f"shows the model's question: {question}")
        answer = await self.ask_user(question)
        self.trace.record("user", "host", "user.answer", answer, payload={"text": answer})
        return answer

    def _missing_work(self) -> list[str]:
        done = self.router.succeeded
        return [tool for tool in self.required_tools if tool not in done]

    def _deliver(self, answer: str, rounds: int) -> RunResult:
        missing = self._missing_work()
        if missing:
            reason = f"not delivered: the task needs {', '.join(missing)}, which did not succeed"
            self.trace.record("host", "host", "host.check", reason, payload={"missing": missing})
            self.trace.record("host", "user", "host.stop", reason)
            return RunResult(answer, False, reason, rounds)
        checked = ", ".join(f"{t} ✓" for t in self.required_tools) or "no required tools"
        self.trace.record("host", "host", "host.check", f"required work done: {checked}")
        self.trace.record("host", "user", "host.deliver", answer, payload={"text": answer})
        return RunResult(answer, True, "delivered", rounds)

    @asynccontextmanager
    async def _connect(self, spec: ServerSpec) -> AsyncIterator[Client]:
        """Start the server (or reach its URL) and open one client to it; both end with the block."""
        events = self._events_dir / f"{spec.name}.jsonl"
        if spec.lab_server:
            spec = replace(spec, env={**spec.env, "LABKIT_EVENTS_FILE": str(events)})
        with ExitStack() as processes:
            if spec.url is not None:
                transport = http_transport(spec.url, self.trace, server=spec.name, headers=spec.headers)
            elif spec.transport == "http":
                url = processes.enter_context(http_server(spec))
                transport = http_transport(url, self.trace, server=spec.name, server_events=events)
            else:
                transport = stdio_transport(spec, self.trace, server_events=events)
            async with Client(
                transport, mode=ERAS[self.era], elicitation_callback=self._on_elicit, client_info=HOST_INFO,
                input_required_max_rounds=self.input_required_max_rounds,
            ) as client:
                yield client

    async def _on_elicit(self, context: Any, params: ElicitRequestFormParams) -> ElicitResult:
        schema = params.requested_schema if hasattr(params, "requested_schema") else {}
        self.trace.record(
            "host", "user", "host.form", f"shows a form: {params.message}",
            payload=params.model_dump(by_alias=True, mode="json", exclude_none=True),
        )
        with self.router.user_time():
            answer = await self.elicit(params.message, schema) if self.elicit is not None else None
        action = "accept" if answer is not None else "decline"
        self.trace.record("user", "host", "user.answer", f"{action} {answer or ''}".strip(), payload=answer)
        return ElicitResult(action=action, content=answer)
