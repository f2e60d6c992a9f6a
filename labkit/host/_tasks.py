"""The host's side of MCP Tasks: a call answered with a task is polled to its end, or cancelled (notebook 10 §4).

2026-07-28 moved Tasks out of the core protocol into an extension, `io.modelcontextprotocol/tasks` (SEP-2663), and
`mcp` 2.3 does not ship it: its shapes are `mcp_types` models here, and they reach the wire through the SDK's client
extension hooks (`ClientExtension`, `ResultClaim`, `ClientSession.send_request`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import anyio
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, EmptyResult, Request, RequestParams, Result, TextContent

from .._i18n import _

__all__ = [
    "CANCEL_TIMEOUT_S",
    "POLL_BOUNDS_S",
    "TASKS",
    "CancelTaskRequest",
    "CreateTaskResult",
    "GetTaskRequest",
    "GetTaskResult",
    "TaskParams",
    "TaskPolling",
    "core_task_refusal",
]

POLL_BOUNDS_S = (0.05, 5.0)
"""The server suggests how often to poll (`pollIntervalMs`); the host keeps it within these bounds."""
CANCEL_TIMEOUT_S = 5.0
"""How long a host that gives up on a task waits for the server to acknowledge `tasks/cancel`."""

TASKS = "io.modelcontextprotocol/tasks"
"""The extension's identifier, declared in both sides' capabilities."""
TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class _Task(Result):
    task_id: str
    status: TaskStatus
    status_message: str | None = None
    created_at: str
    last_updated_at: str
    ttl_ms: int | None = None
    """How long the server keeps the task after `created_at` (spec: required, null for unlimited)."""
    poll_interval_ms: int | None = None


class CreateTaskResult(_Task):
    """A `tools/call` answered with a task instead of its result (`resultType: "task"`)."""

    result_type: Literal["task"] = "task"


class GetTaskResult(_Task):
    """`tasks/get`'s answer: the task, with the call's result once `completed` or its JSON-RPC error once `failed`."""

    result_type: Literal["complete"] = "complete"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class TaskParams(RequestParams):
    task_id: str


class GetTaskRequest(Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    name_param = "taskId"  # over HTTP the task id rides in `Mcp-Name`, so a load balancer can route the poll


class CancelTaskRequest(Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    name_param = "taskId"


class TaskPolling(ClientExtension):
    """Declares `io.modelcontextprotocol/tasks`; a `tools/call` answered `resultType: "task"` becomes `tasks/get`
    polls at the server's suggested interval until the task ends, and the call returns the task's result as if it
    had come at once. A `failed` task raises its JSON-RPC error; a `cancelled` one is an error result. A caller that
    gives up (its deadline, an interrupt) sends `tasks/cancel` before it goes.
    """

    identifier = TASKS

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return (ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._poll),)

    async def _poll(self, created: CreateTaskResult, ctx: ClaimContext) -> CallToolResult:
        task: CreateTaskResult | GetTaskResult = created
        params = TaskParams(task_id=created.task_id)
        try:
            while task.status in ("working", "input_required"):
                low, high = POLL_BOUNDS_S
                await anyio.sleep(min(max((task.poll_interval_ms or 1000) / 1000, low), high))
                task = await ctx.session.send_request(
                    GetTaskRequest(params=params), GetTaskResult, request_read_timeout_seconds=ctx.read_timeout_seconds
                )
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True), anyio.move_on_after(CANCEL_TIMEOUT_S):
                await ctx.session.send_request(CancelTaskRequest(params=params), EmptyResult)
            raise
        return _outcome(ctx.tool_name, task)


def _outcome(tool: str, task: CreateTaskResult | GetTaskResult) -> CallToolResult:
    if isinstance(task, GetTaskResult) and task.status == "completed" and task.result is not None:
        return CallToolResult.model_validate(task.result)
    if isinstance(task, GetTaskResult) and task.status == "failed" and task.error is not None:
        raise MCPError(int(task.error.get("code", -32603)), str(task.error.get("message", "")), task.error.get("data"))
    text = _("The server ended the {tool} task {task_id} as {status}, with no result.").format(
        tool=tool, task_id=task.task_id, status=task.status
    )
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def core_task_refusal(protocol_version: str, tool: str, task_support: str | None) -> str | None:
    """Why the host does not send a call that a 2025-11-25 server said must be a task, or None (notebook 10 §4).

    2025-11-25 had Tasks in the core protocol (SEP-1686): a tool whose `execution.taskSupport` is `required` may only
    be called with `params.task`, and its answer is a task, not a `CallToolResult`. `mcp` 2.3 validates a
    2025-11-25 `tools/call` answer as a `CallToolResult`, so the host cannot read that task; sending the call without
    `params.task` would only get the server's refusal.
    """
    if protocol_version >= "2026-07-28" or task_support != "required":
        return None
    return _(
        "{tool} runs only as a task of the 2025-11-25 protocol (execution.taskSupport: required), which this host "
        "does not speak: it runs tasks through the 2026-07-28 extension {extension}. The call was not sent."
    ).format(tool=tool, extension=TASKS)
