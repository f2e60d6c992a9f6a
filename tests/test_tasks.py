"""MCP Tasks (`io.modelcontextprotocol/tasks`) through the SDK's extension hooks: the archive server and the host.

The archive server answers `archive_orders` with a task to a client that declares the extension; the host's
`TaskPolling` polls `tasks/get` to the end, or sends `tasks/cancel` when it gives up. Real stdio and HTTP servers,
the real SDK; the frames are read from the trace. (`@modelcontextprotocol/server-everything` 2026.8.31 implements
only 2025-11-25's core tasks, `taskSupport: required`, not this extension: tests/test_protocol_beyond.py shows the
host refusing its task-only tool with the reason.)
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, INVALID_REQUEST

from labkit import ServerSpec, Trace, check, http_server, http_transport, select, stdio_transport
from labkit.host import GatePolicy, Host
from labkit.host._tasks import TASKS, GetTaskRequest, GetTaskResult, TaskParams, TaskPolling
from servers._tasks import Tasks

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _requests(trace: Trace, method: str) -> list:
    return [e for e in select(trace, kinds=["jsonrpc.request"]) if e.payload.get("method") == method]


def _results(trace: Trace, method: str) -> list[dict]:
    """The results answering each `method` request, in order."""
    ids = {e.payload["id"] for e in _requests(trace, method)}
    return [e.payload["result"] for e in select(trace, kinds=["jsonrpc.response"]) if e.payload.get("id") in ids]


async def test_a_long_call_is_answered_with_a_task_and_polled_to_its_result() -> None:
    trace = Trace()
    async with Client(stdio_transport("archive", trace), extensions=[TaskPolling()]) as client:
        result = await client.call_tool("archive_orders", {"status": "delivered"})
    [created] = _results(trace, "tools/call")
    assert created["resultType"] == "task" and created["status"] == "working" and "content" not in created
    polls = _results(trace, "tasks/get")
    assert len(polls) >= 2 and {p["taskId"] for p in polls} == {created["taskId"]}
    assert [p["status"] for p in polls[:-1]] == ["working"] * (len(polls) - 1) and polls[-1]["status"] == "completed"
    assert not result.is_error and result.structured_content == polls[-1]["result"]["structuredContent"]
    assert result.structured_content is not None and result.structured_content["file"] == "delivered.csv"


async def test_a_tool_error_in_a_task_is_a_completed_task_with_is_error() -> None:
    trace = Trace()
    async with Client(stdio_transport("archive", trace), extensions=[TaskPolling()]) as client:
        result = await client.call_tool("archive_orders", {"status": "lost"})
    assert result.is_error and "unknown status 'lost'" in result.content[0].text  # type: ignore[union-attr]
    assert _results(trace, "tasks/get")[-1]["status"] == "completed"


async def test_a_client_that_does_not_declare_tasks_gets_the_result_itself() -> None:
    trace = Trace()
    async with Client(stdio_transport("archive", trace)) as client:
        result = await client.call_tool("archive_orders", {"status": "shipped"})
    [answer] = _results(trace, "tools/call")
    assert "taskId" not in answer and not result.is_error and _requests(trace, "tasks/get") == []
    [discovered] = _results(trace, "server/discover")
    assert TASKS in discovered["capabilities"]["extensions"]


async def test_giving_up_on_a_task_cancels_it_on_the_server() -> None:
    trace = Trace()
    with anyio.fail_after(60):
        async with Client(stdio_transport("archive", trace), extensions=[TaskPolling()]) as client:
            with anyio.move_on_after(0.3) as waited:
                await client.call_tool("archive_orders", {"status": "pending"})
            assert waited.cancelled_caught
            [created] = _results(trace, "tools/call")
            after = await client.session.send_request(
                GetTaskRequest(params=TaskParams(task_id=created["taskId"])), GetTaskResult
            )
    [cancel] = _requests(trace, "tasks/cancel")
    assert cancel.payload["params"]["taskId"] == created["taskId"]
    assert after.status == "cancelled" and after.result is None
    created_id = _requests(trace, "tools/call")[0].payload["id"]
    # The spec: a task is cancelled with tasks/cancel, never notifications/cancelled (which may end a poll in flight).
    cancelled = [e.payload["params"]["requestId"] for e in select(trace, kinds=["jsonrpc."]) if e.name == "cancelled"]
    assert created_id not in cancelled


async def test_an_unknown_task_is_an_invalid_params_error() -> None:
    async with Client(stdio_transport("archive", Trace()), extensions=[TaskPolling()]) as client:
        with pytest.raises(MCPError) as raised:
            await client.session.send_request(GetTaskRequest(params=TaskParams(task_id="task_guess")), GetTaskResult)
    assert raised.value.code == INVALID_PARAMS and "task_guess" in raised.value.message


def _failing_server(raise_error: Callable[[], None]) -> MCPServer:
    server = MCPServer("failing", extensions=[Tasks(tools={"fail"})])

    @server.tool()
    async def fail() -> str:
        """Fails with a JSON-RPC error."""
        await anyio.sleep(0.1)
        raise_error()
        return "never"

    return server


async def test_a_json_rpc_error_in_a_task_fails_it_and_reaches_the_caller() -> None:
    def refuse() -> None:
        raise MCPError(INVALID_REQUEST, "the archive is read-only today")

    async with Client(_failing_server(refuse), extensions=[TaskPolling()]) as client:
        with pytest.raises(MCPError) as raised:
            await client.call_tool("fail", {})
    assert raised.value.code == INVALID_REQUEST and raised.value.message == "the archive is read-only today"


async def test_over_http_each_poll_names_its_task_for_routing() -> None:
    trace = Trace()
    with http_server("archive") as url:
        async with Client(http_transport(url, trace, server="archive"), extensions=[TaskPolling()]) as client:
            result = await client.call_tool("archive_orders", {"status": "cancelled"})
    assert not result.is_error
    [created] = _results(trace, "tools/call")
    posts = [p.payload["headers"] for p in select(trace, kinds=["http.request"], http=True)]
    polls = [h for h in posts if h.get("mcp-method") == "tasks/get"]
    assert polls and {h.get("mcp-name") for h in polls} == {created["taskId"]}


async def test_a_host_that_declares_tasks_polls_one_and_gives_the_model_its_result() -> None:
    trace = Trace()
    policy = GatePolicy(auto_approve=frozenset({"archive_orders"}))
    async with Host(trace, [ServerSpec("archive")], policy=policy, tasks=True) as host:
        result = await host.call("archive_orders", {"status": "shipped"})
    assert not result.is_error and "shipped.csv" in result.text
    [created] = _results(trace, "tools/call")
    assert created["resultType"] == "task" and _results(trace, "tasks/get")[-1]["status"] == "completed"
    verdict = check("10.4", trace)  # notebook 10's check reads the same trace
    assert verdict and verdict.message.startswith("Check 10.4 of the run above (not an exercise")


async def test_a_host_that_does_not_declare_tasks_is_never_sent_one() -> None:
    trace = Trace()
    policy = GatePolicy(auto_approve=frozenset({"archive_orders"}))
    async with Host(trace, [ServerSpec("archive")], policy=policy) as host:
        result = await host.call("archive_orders", {"status": "shipped"})
    [answer] = _results(trace, "tools/call")
    assert not result.is_error and "taskId" not in answer and _requests(trace, "tasks/get") == []
    verdict = check("10.4", trace)
    assert not verdict and "tasks=True" in verdict.message


async def test_a_task_past_the_hosts_call_limit_is_cancelled_on_the_server() -> None:
    trace = Trace()
    policy = GatePolicy(auto_approve=frozenset({"archive_orders"}))
    async with Host(trace, [ServerSpec("archive")], policy=policy, tasks=True, call_timeout=0.3) as host:
        result = await host.call("archive_orders", {"status": "pending"})
    [created] = _results(trace, "tools/call")
    assert result.is_error and "stopped waiting" in result.text
    assert [c.payload["params"]["taskId"] for c in _requests(trace, "tasks/cancel")] == [created["taskId"]]
