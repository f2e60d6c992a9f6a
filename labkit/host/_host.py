"""The host: its servers started together, the model loop, the gate on every call, and the check before delivery."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp_types import Tool

from .._i18n import _, listing, ngettext
from ..processes import REPO_ROOT, WORKDIR_ENV, LabTempDir, ServerSpec
from ..trace import Kind, Trace
from ._audit import AuditLog
from ._config import ConfigError, McpConfig, read_config
from ._connector import FORM_ABOUT, Connector, Elicitor
from ._context import block_text, contents_text, guarded, instructions_prompt
from ._conversation import ToolCall, ToolResult
from ._gate import GatePolicy
from ._guards import Guard, LocalTool
from ._pool import ServerPool
from ._router import ToolRouter

__all__ = ["Asker", "Host", "RunResult", "lab_workspace"]

Asker = Callable[[str], Awaitable[str]]
"""Shows the model's question to the user and returns the reply."""


@dataclass(frozen=True)
class RunResult:
    """How a run ended: the answer, whether the host delivered it, and why (notebook 03)."""

    answer: str
    delivered: bool
    reason: str
    rounds: int


def lab_workspace() -> Path:
    """The lab's workspace, to offer servers as their root: `LABKIT_WORKDIR`, else the repository (notebook 08)."""
    return Path(os.environ.get(WORKDIR_ENV) or REPO_ROOT)


class Host:
    """Connects to the servers, runs the model loop and decides what happens (notebook 03).

    `async with Host(trace, [ServerSpec("logs"), ServerSpec("charts")]) as host:` starts one real
    server process and one MCP client per server, and lists their tools. `await host.run(task,
    conversation)` then loops: ask the model, gate each proposed call, send it, write the result
    back as data, until the model answers without a call or the round cap stops it.

    `roots` are the folders the host offers servers (`roots/list`); with none, the capability is not
    declared and a server that asks is told which capability it lacks. `Host.from_config` offers the
    config's workspace; `roots=[lab_workspace()]` offers the lab's.

    `tasks=True` declares the Tasks extension (`io.modelcontextprotocol/tasks`): a server may then answer a long
    call with a task, which the host polls to its end within `call_timeout`, and cancels past it (notebook 10).
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
        start_timeout: float = 30.0,
        roots: Sequence[str | Path] = (),
        sign_in: Any = None,
        tasks: bool = False,
    ) -> None:
        self.trace = trace
        self.servers = list(servers)
        self.ask_user = ask_user
        self.round_cap = round_cap
        self.required_tools = tuple(required_tools)
        self.audit = AuditLog()
        self.pool = ServerPool(trace, guards, namespaced=namespaced, start_timeout=start_timeout)
        self.pool.local.update({local.tool.name: local for local in local_tools})
        self.router = ToolRouter(
            trace,
            self.audit,
            policy,
            self.pool,
            call_timeout=call_timeout,
            max_result_chars=max_result_chars,
            guards=guards,
        )
        # input_required_max_rounds: the form rounds the SDK allows one call (notebook 04)
        self.connector = Connector(
            trace,
            self.pool,
            self.router,
            era=era,
            elicit=elicit,
            input_required_max_rounds=input_required_max_rounds,
            roots=tuple(Path(r).resolve() for r in roots),
            tasks=tasks,
        )
        self.connector.sign_in = sign_in  # a SignIn: how the host signs in to protected servers (notebook 09)
        self.router.offered = frozenset({"elicitation", *(("roots",) if self.connector.roots else ())})
        self._calls = 0
        self._config: McpConfig | None = None
        """A config whose `${input:id}`s are asked when the host starts, and the answers already given."""
        self._answers: dict[str, str] = {}

    @classmethod
    def from_config(
        cls,
        trace: Trace,
        path: str | Path,
        *,
        inputs: dict[str, str] | None = None,
        workspace: str | Path | None = None,
        **options: Any,
    ) -> Host:
        """A host for every enabled server of an MCP config file, as desktop hosts and editors write it (notebook 08).

        JSONC, variables, `envFile`, `disabled` and `type: "sse"` are read as `read_config` says; a
        `${input:id}` not answered in `inputs` is asked through `elicit` when the host starts. The
        config's workspace is offered to the servers as their root unless `roots` says otherwise.
        """
        config = read_config(path, workspace=workspace)
        options.setdefault("roots", [config.workspace])
        for name in config.disabled:
            trace.record(
                "host",
                "host",
                Kind.HOST_NOTE,
                _("skips the disabled server {name} ({source})").format(name=name, source=config.source),
                payload={"server": name, "disabled": True},
            )
        missing = [id_ for id_ in config.needed_inputs() if id_ not in (inputs or {})]
        host = cls(trace, [] if missing else config.specs(inputs), **options)
        if missing:
            host._config, host._answers = config, dict(inputs or {})
        return host

    @property
    def tools(self) -> list[Tool]:
        """Every tool the servers listed (after the guards), under the names the model must use."""
        return self.pool.tools

    async def __aenter__(self) -> Host:
        """Start every server at once, each client held by a task of its own; `start_timeout` bounds it all."""
        if self._config is not None:
            self.servers = self._config.specs(await self._ask_inputs(self._config))
            self._config = None
        self.connector.events = LabTempDir("events")
        try:
            await self.pool.start(
                {spec.name: (spec.describe(), partial(self.connector.connect, spec)) for spec in self.servers}
            )
        except BaseException:
            await self.aclose()
            raise
        return self

    async def _ask_inputs(self, config: McpConfig) -> dict[str, str]:
        """The config's unanswered inputs, asked in one form, the values never written to the trace."""
        missing = [id_ for id_ in config.needed_inputs() if id_ not in self._answers]
        if self.connector.elicit is None:
            raise ConfigError(
                _("{source} asks for {ids}: pass inputs={{...}} or elicit=labkit.widget_form(...)").format(
                    source=config.source, ids=listing(missing)
                )
            )
        message, schema = config.input_form(missing)
        self.trace.record("host", "user", Kind.HOST_FORM, message, payload={"inputs": missing}, asked_by="host")
        token = FORM_ABOUT.set(_("the host itself, for the config {source}").format(source=config.source))
        try:
            answer = await self.connector.elicit(message, schema)
        finally:
            FORM_ABOUT.reset(token)
        if answer is None or any(id_ not in answer for id_ in missing):
            raise ConfigError(
                _("{source}: the form for {ids} was declined, so its servers cannot start").format(
                    source=config.source, ids=listing(missing)
                )
            )
        self.trace.record(
            "user",
            "host",
            Kind.USER_ANSWER,
            _("answered {ids}").format(ids=listing(missing)),
            payload={"inputs": missing},
        )
        return {**self._answers, **{id_: str(answer[id_]) for id_ in missing}}

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop every server (one that fails to stop does not keep the others running) and remove the temp folder."""
        try:
            await self.pool.aclose()
        finally:
            for log in self.pool.stderr.values():
                log.close()
            for port in self.pool.ports.values():
                port.close()
            if self.connector.events is not None:
                self.connector.events.remove()

    async def call(self, tool: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """One call, carried like a model's: gate, guards, the server, the result as data (notebook 02)."""
        if arguments is not None and not isinstance(arguments, Mapping):
            given = type(arguments).__name__
            hint = " (JSON text: pass json.loads(text))" if isinstance(arguments, str | bytes) else ""
            raise TypeError(
                f"host.call({tool!r}, arguments): arguments are a dict of names to values, such as "
                f"{{'service': 'payments'}}, not a {given}{hint}"
            )
        self._calls += 1
        await self.pool.refresh_changed()
        return await self.router.execute(ToolCall(f"host-call-{self._calls}", tool, dict(arguments or {})))

    async def get_prompt(self, server: str, name: str, arguments: dict[str, Any] | None = None) -> Any:
        """A prompt from one connected server (the user's or a skill's choice, notebook 06); KeyError if none."""
        if server not in self.pool.servers:
            raise KeyError(server)
        return await self.pool.client(server).get_prompt(name, arguments or {})

    @property
    def up(self) -> list[str]:
        """The servers that started and are offered (notebook 07)."""
        return self.pool.servers

    @property
    def unavailable(self) -> dict[str, Exception]:
        """The servers that could not be started, each with its error; the host goes on without them (notebook 07)."""
        return dict(self.pool.unavailable)

    def system_prompt(self, base: str | None = None) -> str:
        """`base` followed by the servers' `instructions` the guards let through, as a host's system prompt, and which
        servers are unavailable (notebook 07)."""
        clients = {server: self.pool.client(server) for server in self.pool.servers}
        prompt = instructions_prompt(self.trace, clients, self.pool.guards, base)
        if not self.pool.unavailable:
            return prompt
        # Said in the model's language of work (the system prompt's), like the tool results the model reads.
        down = "Unavailable MCP servers (they could not be started; their tools are not offered): " + ", ".join(
            self.pool.unavailable
        )
        return "\n\n".join(part for part in (prompt, down) if part)

    async def load_prompt(self, server: str, name: str, arguments: dict[str, str] | None = None) -> str:
        """A server's prompt as the text the user adds to the conversation, through the guards (notebook 07)."""
        prompt = await self.get_prompt(server, name, arguments)
        texts = [block_text(message.content, {}) for message in prompt.messages]
        return await self._loaded(server, "prompt", name, "\n".join(t for t in texts if t is not None), arguments)

    async def load_resource(self, server: str, uri: str) -> str:
        """A server's resource as the text the user attaches to the conversation, through the guards (notebook 07)."""
        if server not in self.pool.servers:
            raise KeyError(server)
        read = await self.pool.client(server).read_resource(uri)
        return await self._loaded(server, "resource", uri, contents_text(read.contents), None)

    async def _loaded(self, server: str, kind: str, name: str, text: str, arguments: dict[str, str] | None) -> str:
        """Loaded content as the conversation gets it: withheld when a guard says why, else through the guards."""
        for guard in self.pool.guards:
            why = await guard.on_content(server, kind, name, text, dict(arguments or {}))
            if why:
                shown = {"prompt": _("prompt"), "resource": _("resource")}.get(kind, kind)
                return _("[the {kind} {name} of {server} is withheld by the host: {why}]").format(
                    kind=shown, name=name, server=server, why=why
                )
        return guarded(self.pool.guards, server, name, text)

    async def run(self, task: str, conversation: Any) -> RunResult:
        """The loop of notebook 03, from the user's question to delivery or the round cap."""
        self.trace.round = 1
        self.trace.record("user", "host", Kind.USER_ASK, task, payload={"text": task})
        conversation.add_user(task)
        for round_no in range(1, self.round_cap + 1):
            self.trace.round = round_no
            await self.pool.refresh_changed()
            turn = await conversation.ask()
            if not turn.tool_calls:
                if self._asks_back(turn.text):
                    answer = await self._relay_question(turn.text)
                    conversation.add_user(answer)
                    continue
                if turn.declined:
                    return self._stop(turn.text, _("not delivered: the model declined the task"), round_no)
                return self._deliver(turn.text, round_no)
            results = await self._execute_together(turn.tool_calls)
            self.trace.record(
                "host",
                "host",
                Kind.HOST_WRITEBACK,
                ngettext(
                    "wrote {n} result back to the model as data",
                    "wrote {n} results back to the model as data",
                    len(results),
                ).format(n=len(results)),
                payload=[r.__dict__ for r in results],
            )
            conversation.add_tool_results(results)
        reason = _("stopped after {n} rounds: the model kept calling tools").format(n=self.round_cap)
        return self._stop("", reason, self.round_cap)

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
        return self.ask_user is not None and any(mark in text for mark in "?？") and self._missing_work() != []

    async def _relay_question(self, question: str) -> str:
        assert self.ask_user is not None
        self.trace.record(
            "host",
            "user",
            Kind.HOST_RELAY,
            _("shows the model's question: {question}").format(question=question),
            payload={"question": question},
        )
        answer = await self.ask_user(question)
        self.trace.record("user", "host", Kind.USER_ANSWER, answer, payload={"text": answer})
        return answer

    def _missing_work(self) -> list[str]:
        done = self.router.succeeded
        return [tool for tool in self.required_tools if tool not in done]

    def _stop(self, answer: str, reason: str, rounds: int) -> RunResult:
        """The run ends without a delivery; the user is told why."""
        self.trace.record("host", "user", Kind.HOST_STOP, reason)
        return RunResult(answer, False, reason, rounds)

    def _deliver(self, answer: str, rounds: int) -> RunResult:
        for guard in self.pool.guards:  # what the person will see rendered, after every guard's say
            answer = guard.on_deliver(answer)
        missing = self._missing_work()
        if missing:
            reason = _("not delivered: the task needs {tools}, which did not succeed").format(tools=listing(missing))
            self.trace.record("host", "host", Kind.HOST_CHECK, reason, payload={"missing": missing})
            return self._stop(answer, reason, rounds)
        checked = listing(f"{t} ✓" for t in self.required_tools) or _("no required tools")
        self.trace.record("host", "host", Kind.HOST_CHECK, _("required work done: {checked}").format(checked=checked))
        self.trace.record("host", "user", Kind.HOST_DELIVER, answer, payload={"text": answer})
        return RunResult(answer, True, _("delivered"), rounds)
