"""Notebook 10's protocol, on the wire: progress and cancellation, pages, listen and re-listing, a job handle.

Each runs against the lab's servers (`jobs`, `toolbox`) over real stdio or HTTP; progress and cancellation run
against `@modelcontextprotocol/server-everything` too, a server nobody here wrote, when it is installed
(`npm install --prefix ~/.cache/labkit-npm/everything @modelcontextprotocol/server-everything@2026.8.31`; CI does,
and sets LABKIT_REQUIRE_EVERYTHING so that a missing install fails instead of skipping).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from labkit import ProgressUpdates, ServerSpec, Trace, http_server, http_transport, select, stdio_transport
from labkit.host import GatePolicy, Host, _tool_listing
from labkit.host._tasks import TASKS
from servers.toolbox import PAGE_SIZE

pytestmark = pytest.mark.anyio
EVERYTHING = (
    Path(os.environ.get("LABKIT_NPM_CACHE", Path.home() / ".cache" / "labkit-npm"))
    / "everything"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
ENDLESS_PAGES = Path(__file__).with_name("endless_pages_server.py")
SILENT_LISTEN = Path(__file__).with_name("silent_listen_server.py")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _frames(trace: Trace, name: str) -> list:
    return [e for e in select(trace, kinds=["jsonrpc."]) if e.name == name]


def _everything() -> ServerSpec:
    if not EVERYTHING.is_file() or shutil.which("node") is None:
        missing = f"server-everything is not installed at {EVERYTHING} (CI installs it: .ci/run)"
        if os.environ.get("LABKIT_REQUIRE_EVERYTHING"):
            pytest.fail(missing)
        pytest.skip(missing)
    return ServerSpec("everything", command="node", args=(str(EVERYTHING), "stdio"))


def _slow_call(server: str) -> tuple[ServerSpec | str, str, dict]:
    if server == "everything":
        return _everything(), "trigger-long-running-operation", {"duration": 2, "steps": 4}
    return "jobs", "export_orders", {"status": "pending"}


@pytest.mark.parametrize("server", ["jobs", "everything"])
async def test_a_progress_token_brings_progress_frames_that_quote_it(server: str) -> None:
    spec, tool, arguments = _slow_call(server)
    trace = Trace()
    updates = ProgressUpdates()
    async with Client(stdio_transport(spec, trace)) as client:
        await client.call_tool(tool, arguments, progress_callback=updates)
        await client.call_tool(tool, arguments)  # no callback: no token, no progress
    calls = [e for e in select(trace, kinds=["jsonrpc.request"]) if e.name == tool]
    token = calls[0].payload["params"]["_meta"]["progressToken"]
    assert "progressToken" not in (calls[1].payload["params"].get("_meta") or {})
    frames = _frames(trace, "notifications/progress")
    assert frames and {f.payload["params"]["progressToken"] for f in frames} == {token}
    assert [u[0] for u in updates.updates] == [f.payload["params"]["progress"] for f in frames]
    assert updates.updates[-1][0] == updates.updates[-1][1]  # the last report is the whole


@pytest.mark.parametrize("server", ["jobs", "everything"])
async def test_giving_up_sends_cancelled_for_that_request_and_gets_no_answer(server: str) -> None:
    spec, tool, arguments = _slow_call(server)
    trace = Trace()
    async with Client(stdio_transport(spec, trace)) as client:
        await client.list_tools()
        with anyio.move_on_after(0.2) as scope:
            await client.call_tool(tool, arguments)
        assert scope.cancelled_caught
        await anyio.sleep(1.5)  # time for an answer the server should not send
    call = next(e for e in select(trace, kinds=["jsonrpc.request"]) if e.name == tool)
    cancelled = _frames(trace, "notifications/cancelled")
    assert [c.payload["params"]["requestId"] for c in cancelled] == [call.payload["id"]]
    replies = select(trace, kinds=["jsonrpc.response", "jsonrpc.error"])
    assert [e for e in replies if e.payload.get("id") == call.payload["id"]] == []


async def test_the_toolbox_lists_in_pages_and_refuses_a_forged_cursor() -> None:
    trace = Trace()
    async with Client(stdio_transport("toolbox", trace)) as client:
        pages, cursor = [], None
        while True:
            page = await client.list_tools(cursor=cursor)
            pages.append([t.name for t in page.tools])
            if (cursor := page.next_cursor) is None:
                break
        with pytest.raises(MCPError) as refused:
            await client.list_tools(cursor="not-a-cursor")
    assert len(pages) > 1 and all(len(p) == PAGE_SIZE for p in pages[:-1]) and 0 < len(pages[-1]) <= PAGE_SIZE
    names = [n for p in pages for n in p]
    assert len(names) == len(set(names))
    assert refused.value.error.code == INVALID_PARAMS
    sent = [
        r.payload["params"].get("cursor") for r in select(trace, kinds=["jsonrpc.request"]) if r.name == "tools/list"
    ]
    assert sent[0] is None and all(sent[1:])


async def test_listen_hears_the_change_and_a_new_listing_shows_the_new_tool() -> None:
    trace = Trace()
    async with Client(stdio_transport("toolbox", trace)) as client:
        async with client.listen(tools_list_changed=True) as subscription:
            await client.call_tool("enable_currency_pack", {})
            with anyio.fail_after(20):
                event = await anext(aiter(subscription))
        names, cursor = [], None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            if (cursor := page.next_cursor) is None:
                break
    assert type(event).__name__ == "ToolsListChanged" and "convert_currency" in names
    listen = _frames(trace, "subscriptions/listen")[0]
    changed = _frames(trace, "notifications/tools/list_changed")
    assert listen.payload["params"]["notifications"] == {"toolsListChanged": True}
    tags = [c.payload["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for c in changed]
    assert tags == [listen.payload["id"]]


async def test_a_job_handle_carries_state_across_connections_and_is_unknown_elsewhere() -> None:
    trace = Trace()
    with http_server("jobs") as url:
        async with Client(http_transport(url, trace, server="jobs")) as client:
            started = (await client.call_tool("start_export", {"status": "delivered"})).structured_content
        state = started
        with anyio.fail_after(30):
            while state["state"] == "working":
                await anyio.sleep(0.1)
                async with Client(http_transport(url, trace, server="jobs")) as client:
                    state = (await client.call_tool("export_status", {"job": started["job"]})).structured_content
    assert state["state"] == "completed" and state["done"] == state["total"] and state["result"]["rows"] > 0
    assert not any("mcp-session-id" in r.payload["headers"] for r in select(trace, kinds=["http.request"], http=True))
    async with Client(stdio_transport("jobs", Trace())) as other:
        unknown = await other.call_tool("export_status", {"job": started["job"]})
    assert unknown.is_error and "no job" in str(unknown.content[0].model_dump().get("text"))


def test_notebook_10_checks_refuse_what_the_lesson_warns_about() -> None:
    from labkit import check
    from servers.jobs import build_server

    assert not check("10.1", ["convert_length", "convert_weight", "convert_temperature"])  # the first page only
    own = next(t for t in anyio.run(build_server().list_tools) if t.name == "export_orders").description
    assert not check("10.2", own)  # the description that stole a question in §6
    assert not check("10.3", {"job": "job_x", "state": "working", "done": 1, "total": 4})
    forged = {
        "job": "job_x",
        "state": "completed",
        "done": 4,
        "total": 4,
        "result": {"status": "delivered", "rows": 999, "file": "delivered.csv"},
    }
    assert not check("10.3", forged)


# The host (labkit.host.Host) on the same servers: it reads every page, asks for progress on every call, and lists
# again when a server says its tools changed, so the model is offered what the server lists now.


async def test_the_host_offers_every_page_of_a_paged_tool_list() -> None:
    trace = Trace()
    async with Client(stdio_transport("toolbox", Trace())) as client:
        listed, cursor = [], None
        while True:
            page = await client.list_tools(cursor=cursor)
            listed += [t.name for t in page.tools]
            if (cursor := page.next_cursor) is None:
                break
    async with Host(trace, [ServerSpec("toolbox")]) as host:
        offered = [tool.name for tool in host.tools]
        result = await host.call("convert_speed", {"value": 100, "unit": "km/h"})  # on the last page
    assert len(listed) > PAGE_SIZE and offered == listed
    assert not result.is_error and json.loads(result.text)["result"] == pytest.approx(62.137)
    cursors = [r.payload["params"].get("cursor") for r in _frames(trace, "tools/list") if r.kind == "jsonrpc.request"]
    assert len(cursors) == -(-len(listed) // PAGE_SIZE) and cursors[0] is None and all(cursors[1:])


async def test_a_server_that_pages_for_ever_is_read_up_to_a_limit_and_named() -> None:
    spec = ServerSpec("endless", command=sys.executable, args=(str(ENDLESS_PAGES),))
    trace = Trace()
    with anyio.fail_after(120):
        async with Host(trace, [spec]) as host:
            offered = [tool.name for tool in host.tools]
    [error] = [e for e in trace.of_kind("host.error") if e.meta.get("server") == "endless"]
    assert "endless" in error.summary and "same cursor twice" in error.summary
    assert offered == ["tool_0", "tool_1"]  # what the pages before the repeat listed


@pytest.mark.parametrize("server", ["jobs", "everything"])
async def test_the_host_asks_for_progress_on_every_call(server: str) -> None:
    spec, tool, arguments = _slow_call(server)
    trace = Trace()
    policy = GatePolicy(auto_approve=frozenset({tool}))  # export_orders writes a file
    async with Host(trace, [spec if isinstance(spec, ServerSpec) else ServerSpec(spec)], policy=policy) as host:
        result = await host.call(tool, arguments)
    assert not result.is_error, result.text
    [call] = [e for e in select(trace, kinds=["jsonrpc.request"]) if e.name == tool]
    token = call.payload["params"]["_meta"]["progressToken"]
    frames = _frames(trace, "notifications/progress")
    assert len(frames) > 1 and {f.payload["params"]["progressToken"] for f in frames} == {token}
    progress = [f.payload["params"]["progress"] for f in frames]
    assert progress == sorted(progress) and progress[-1] == frames[-1].payload["params"]["total"]


async def test_a_call_the_host_gives_up_on_says_how_far_it_had_got() -> None:
    trace = Trace()
    policy = GatePolicy(auto_approve=frozenset({"export_orders"}))
    async with Host(trace, [ServerSpec("jobs")], call_timeout=0.4, policy=policy) as host:
        result = await host.call("export_orders", {"status": "shipped"})
    reports = [f.payload["params"] for f in _frames(trace, "notifications/progress")]
    assert result.is_error and "stopped waiting" in result.text
    if reports:  # how many arrive before the limit depends on the machine; the message quotes the last
        assert f"It had reported progress {reports[-1]['progress']:g} of {reports[-1]['total']:g}." in result.text
    else:
        assert "reported progress" not in result.text


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
async def test_the_host_lists_again_when_a_server_says_its_tools_changed(era: str) -> None:
    trace = Trace()
    policy = GatePolicy(auto_approve=frozenset({"enable_currency_pack"}))
    async with Host(trace, [ServerSpec("toolbox")], era=era, policy=policy) as host:
        before = [tool.name for tool in host.tools]
        refused = await host.call("convert_currency", {"amount": 10, "source": "USD", "target": "CNY"})
        await host.call("enable_currency_pack", {})
        with anyio.fail_after(30):
            while "toolbox" not in host.pool.changed:
                await anyio.sleep(0.05)
        converted = await host.call("convert_currency", {"amount": 10, "source": "USD", "target": "CNY"})
        after = [tool.name for tool in host.tools]
    assert "convert_currency" not in before and refused.is_error and "no server offers" in refused.text
    assert after == [*before, "convert_currency"] or set(after) == {*before, "convert_currency"}
    assert not converted.is_error and json.loads(converted.text)["result"] == pytest.approx(71.0)
    [changed] = _frames(trace, "notifications/tools/list_changed")
    notes = [e for e in trace.of_kind("host.note") if e.meta.get("server") == "toolbox"]
    assert len(notes) == 1 and notes[0].seq > changed.seq
    if era == "2026-07-28":  # told on the listen stream it opened, tagged with that stream's id
        [listen] = [e for e in _frames(trace, "subscriptions/listen") if e.kind == "jsonrpc.request"]
        assert changed.payload["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen.payload["id"]
    else:  # told unasked, as servers did before 2026-07-28
        assert _frames(trace, "subscriptions/listen") == []
    relisted = [e for e in select(trace, kinds=["jsonrpc.request"]) if e.name == "tools/list" and e.seq > changed.seq]
    assert relisted


async def test_a_server_whose_tools_never_change_is_not_listened_to() -> None:
    trace = Trace()
    policy = GatePolicy(auto_approve=frozenset({"export_orders"}))
    async with Host(trace, [ServerSpec("jobs")], policy=policy) as host:
        await host.call("export_orders", {"status": "cancelled"})
    assert _frames(trace, "subscriptions/listen") == [] and host.pool.changed == set()


async def test_a_server_that_never_acknowledges_listen_is_not_listened_to_and_still_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_tool_listing, "ACK_TIMEOUT_S", 1.0)
    spec = ServerSpec("silent", command=sys.executable, args=(str(SILENT_LISTEN),))
    trace = Trace()
    with anyio.fail_after(120):
        async with Host(trace, [spec]) as host:
            result = await host.call("echo", {"text": "still here"})
    assert not result.is_error and "still here" in result.text
    [listen] = [e for e in _frames(trace, "subscriptions/listen") if e.kind == "jsonrpc.request"]
    assert _frames(trace, "notifications/subscriptions/acknowledged") == []
    cancelled = _frames(trace, "notifications/cancelled")
    assert [c.payload["params"]["requestId"] for c in cancelled] == [listen.payload["id"]]


@pytest.mark.filterwarnings("ignore:resources/subscribe is removed")  # 2025-11-25 had it; listen replaced it
async def test_before_listen_a_foreign_server_announces_updates_and_list_changes_unasked() -> None:
    """server-everything speaks 2025-11-25: a subscribed resource's updates and a grown resource list are
    notifications it sends on its own, the counterpart of what 2026-07-28 sends only on a listen stream."""
    spec = _everything()
    trace = Trace()
    heard: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: object) -> None:
        heard.append(type(message).__name__)
        if {"ResourceUpdatedNotification", "ResourceListChangedNotification"} <= set(heard):
            arrived.set()

    async with Client(stdio_transport(spec, trace), mode="legacy", message_handler=on_message) as client:
        uri = str((await client.list_resources()).resources[0].uri)
        await client.subscribe_resource(uri)
        await client.call_tool("toggle-subscriber-updates", {})
        data = "data:text/plain;base64,aGVsbG8="
        await client.call_tool("gzip-file-as-resource", {"name": "hello.txt.gz", "data": data})
        with anyio.fail_after(30):
            await arrived.wait()
    [subscribe] = [e for e in select(trace, kinds=["jsonrpc.request"]) if e.name == "resources/subscribe"]
    assert subscribe.payload["params"]["uri"] == uri
    updated = _frames(trace, "notifications/resources/updated")
    assert updated and {u.payload["params"]["uri"] for u in updated} == {uri}
    assert _frames(trace, "notifications/resources/list_changed")
    assert _frames(trace, "subscriptions/listen") == []


async def test_a_tool_a_server_adds_while_the_host_runs_waits_for_a_person_like_a_rug_pull(tmp_path: Path) -> None:
    from labkit.security import PinGuard, PinStore
    from labkit.security._pins import PinChange

    asked: list[list[str]] = []

    async def first_listing_only(server: str, changes: list[PinChange]) -> bool:
        asked.append([change.summary for change in changes])
        return len(asked) == 1  # the person approved the tools they installed, and nothing since

    trace = Trace()
    pins = PinGuard(trace, PinStore(tmp_path / "pins.json"), first_listing_only, {})
    policy = GatePolicy(auto_approve=frozenset({"enable_currency_pack"}))
    async with Host(trace, [ServerSpec("toolbox")], policy=policy, guards=[pins]) as host:
        await host.call("enable_currency_pack", {})
        with anyio.fail_after(30):
            while "toolbox" not in host.pool.changed:
                await anyio.sleep(0.05)
        withheld = await host.call("convert_currency", {"amount": 10, "source": "USD", "target": "CNY"})
        offered = [tool.name for tool in host.tools]
    assert len(asked) == 2 and asked[1] == ["convert_currency: new"]
    assert "convert_currency" not in offered and withheld.is_error and "no server offers" in withheld.text
    assert not [e for e in select(trace, kinds=["jsonrpc.request"]) if e.name == "convert_currency"]


async def test_a_foreign_task_only_tool_of_2025_11_25_is_not_sent_and_the_host_says_why() -> None:
    """server-everything 2026.8.31 is a Tasks server of 2025-11-25 (core Tasks, SEP-1686), not of the 2026-07-28
    extension: `simulate-research-query` requires `params.task`, whose answer mcp 2.3 cannot read at 2025-11-25.
    Host(tasks=True) does not send that call, names the reason, and goes on with the server's other tools."""
    spec = _everything()
    trace = Trace()
    policy = GatePolicy(auto_approve=frozenset({"simulate-research-query", "echo"}))
    async with Host(trace, [spec], policy=policy, tasks=True) as host:
        refused = await host.call("simulate-research-query", {"topic": "MCP"})
        echoed = await host.call("echo", {"message": "still here"})
    [initialized] = [e for e in _frames(trace, "initialize") if e.kind == "jsonrpc.response"]
    assert "call" in initialized.payload["result"]["capabilities"]["tasks"]["requests"]["tools"]  # it runs tasks
    assert refused.is_error and "2025-11-25" in refused.text and TASKS in refused.text
    assert _frames(trace, "simulate-research-query") == []  # the call was never sent
    assert not echoed.is_error and "still here" in echoed.text
