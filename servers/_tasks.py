"""The Tasks extension on a lab server: chosen tools answer a declaring client with a task it polls (notebook 10 §4)."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolRequestParams, EmptyResult, RequestParams
from pydantic import BaseModel

from servers.i18n import _

__all__ = ["POLL_INTERVAL_MS", "TASKS", "TTL_MS", "Tasks"]

TASKS = "io.modelcontextprotocol/tasks"
"""The extension's identifier (SEP-2663), declared in both sides' capabilities."""
TTL_MS = 600_000
"""How long a task is kept after it was created; a later `tasks/get` for it is an unknown task."""
POLL_INTERVAL_MS = 200
"""How often the server suggests a client poll."""


TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]
_TERMINAL = frozenset({"completed", "failed", "cancelled"})


class TaskParams(RequestParams):
    task_id: str


@dataclass
class _Task:
    tool: str
    created_at: datetime
    status: TaskStatus = "working"
    updated_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    work: asyncio.Task[None] | None = field(default=None, repr=False)

    def finish(self, status: TaskStatus, **outcome: dict[str, Any]) -> None:
        if self.status in _TERMINAL:  # a terminal state never changes (a cancel racing a finish loses)
            return
        self.status, self.updated_at = status, datetime.now(UTC)
        self.result, self.error = outcome.get("result"), outcome.get("error")


class Tasks(Extension):
    """`io.modelcontextprotocol/tasks`: a call to one of `tools` from a client that declared the extension on that
    request is answered at once with a task (`resultType: "task"`); the tool runs on, and the client polls
    `tasks/get` until the task is `completed` (with the tool's result, `isError` included), `failed` (a JSON-RPC
    error) or `cancelled` (`tasks/cancel`). Any other client, or tool, gets the ordinary result.
    """

    identifier = TASKS

    def __init__(self, tools: Iterable[str]) -> None:
        self.task_tools = frozenset(tools)
        self._tasks: dict[str, _Task] = {}

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", TaskParams, self._get),
            MethodBinding("tasks/cancel", TaskParams, self._cancel),
        )

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        declared = ctx.session.client_capabilities.extensions if ctx.session.client_capabilities else None
        if params.name not in self.task_tools or not declared or TASKS not in declared:
            return await call_next(ctx)
        self._forget_expired()
        task_id = f"task_{secrets.token_urlsafe(16)}"  # unguessable: the id is the only key to the task
        task = self._tasks[task_id] = _Task(params.name, created_at=datetime.now(UTC))
        task.work = asyncio.get_running_loop().create_task(self._run(task, call_next, ctx))
        return {"resultType": "task", **self._fields(task_id, task)}

    async def _run(self, task: _Task, call_next: CallNext, ctx: ServerRequestContext[Any, Any]) -> None:
        try:
            result = await call_next(ctx)
        except MCPError as error:
            task.finish("failed", error=error.error.model_dump(by_alias=True, mode="json", exclude_none=True))
        else:
            if isinstance(result, BaseModel):
                result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            task.finish("completed", result=result or {})

    async def _get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        task = self._known(params.task_id)
        outcome = {"result": task.result} if task.result is not None else {"error": task.error} if task.error else {}
        return {"resultType": "complete", **self._fields(params.task_id, task), **outcome}

    async def _cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> EmptyResult:
        task = self._known(params.task_id)
        if task.work is not None and not task.work.done():
            task.work.cancel()
            task.finish("cancelled")
        return EmptyResult()

    def _known(self, task_id: str) -> _Task:
        self._forget_expired()
        if task_id not in self._tasks:
            raise MCPError(INVALID_PARAMS, _("no task {task_id!r} on this server").format(task_id=task_id))
        return self._tasks[task_id]

    def _forget_expired(self) -> None:
        now = datetime.now(UTC)
        for task_id, task in list(self._tasks.items()):
            if (now - task.created_at).total_seconds() * 1000 > TTL_MS:
                if task.work is not None:
                    task.work.cancel()
                del self._tasks[task_id]

    @staticmethod
    def _fields(task_id: str, task: _Task) -> dict[str, Any]:
        return {
            "taskId": task_id,
            "status": task.status,
            "createdAt": task.created_at.isoformat(),
            "lastUpdatedAt": task.updated_at.isoformat(),
            "ttlMs": TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
