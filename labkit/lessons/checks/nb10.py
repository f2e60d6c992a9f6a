"""Checks for notebook 10 (beyond one call): each one runs the real servers or the test set on the learner's answer."""

from __future__ import annotations

import csv
from typing import Any

from mcp import Client

from labkit._i18n import N_, _
from servers._wiring import data_dir

from ...host import stdio_transport
from ...trace import Kind, Trace
from .._exercises import register, run_sync
from .._tool_eval import EvalCase, load_eval_set, run_tool_eval, server_tools

__all__ = ["check_every_page", "check_export_description", "check_job_result", "check_task_run"]

_EXPORT_QUESTION = "Export the pending orders to a CSV file."
_JOB_STATUS = "delivered"


async def _toolbox_after_enabling() -> list[str]:
    async with Client(stdio_transport("toolbox", Trace())) as client:
        await _every_page(client)  # the SDK looks a called tool up in the listing it holds: give it the whole list
        await client.call_tool("enable_currency_pack", {})
        return await _every_page(client)


async def _every_page(client: Client) -> list[str]:
    names: list[str] = []
    cursor = None
    while True:
        page = await client.list_tools(cursor=cursor)
        names += [tool.name for tool in page.tools]
        if (cursor := page.next_cursor) is None:
            return names


@register(
    "10.1", N_("A tool list may come in pages: follow nextCursor until there is none."), N_("§2 A tool list in pages")
)
def check_every_page(names: Any) -> str | None:
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return _("answer_1 should be a list of tool names (strings).")
    listed = run_sync(_toolbox_after_enabling)
    if names == listed:
        return None
    missing = [n for n in listed if n not in names]
    if missing:
        return _(
            "{count} of the {total} tools are missing, among them {missing}: read every page, after enabling the pack."
        ).format(count=len(missing), total=len(listed), missing=missing[:3])
    return _("the names are not those of the listing, in order: {listed}.").format(listed=listed)


async def _export_runs(description: str) -> tuple[Any, Any, Any]:
    eval_set = load_eval_set()
    tools = await server_tools(eval_set.servers)
    jobs = [
        t | {"description": description} if t["name"] == "export_orders" else t for t in await server_tools(["jobs"])
    ]
    baseline = await run_tool_eval(tools, eval_set, env={})
    crowded = await run_tool_eval(tools + jobs, eval_set, env={})
    export_case = eval_set.__class__(
        eval_set.name,
        eval_set.version,
        eval_set.servers,
        (EvalCase("export", _EXPORT_QUESTION, "export_orders", {"status": "pending"}),),
        eval_set.sha256,
    )
    export = await run_tool_eval(tools + jobs, export_case, env={})
    return baseline, crowded, export


@register(
    "10.2",
    N_(
        "A second server's tools compete with the first's: a description that says when, and when "
        "not, keeps each question with its tool, and a test set shows it."
    ),
    N_("§6 Measuring tool choice"),
)
def check_export_description(description: Any) -> str | None:
    if not isinstance(description, str) or len(description.split()) < 12:
        return _("answer_2 should be a description of a sentence or more (12 words at least).")
    baseline, crowded, export = run_sync(lambda: _export_runs(description))
    lost = crowded.changed(baseline)
    if lost:
        return _(
            "with your export_orders offered, {count} case(s) changed verdict, e.g. {case}: {question!r} "
            "is now a {verdict}."
        ).format(count=len(lost), case=lost[0][_("case")], question=lost[0][_("question")], verdict=lost[0][_("after")])
    outcome = export.outcomes[0]
    if outcome.called != "export_orders":
        return _(
            "asked {question!r}, the model called {called}, not export_orders: the description must still "
            "say what it is for."
        ).format(question=_EXPORT_QUESTION, called=outcome.called or _("no tool"))
    return None


@register(
    "10.3",
    N_(
        "State across stateless calls lives behind a handle the server mints; the client polls with "
        "it until the work is done."
    ),
    N_("§4 Work that outlives its request: a handle"),
)
def check_job_result(state: Any) -> str | None:
    if not isinstance(state, dict) or not {"job", "state", "done", "total"} <= set(state):
        return _("answer_3 should be the structured_content dict export_status returned (job, state, done, total…).")
    if state["state"] == "working":
        return _("the job was still working: poll again until the state is completed or failed.")
    if state["state"] != "completed" or not isinstance(state.get("result"), dict):
        return _("the job ended {state!r}, with no result.").format(state=state["state"])
    if state["result"].get("status") != _JOB_STATUS:
        return _("the export is of {status!r} orders; start one for {wanted!r}.").format(
            status=state["result"].get("status"), wanted=_JOB_STATUS
        )
    if state["done"] != state["total"]:
        return _("a completed job should have done all {total} batches, not {done}.").format(**state)
    exported = data_dir() / "exports" / str(state["result"].get("file"))
    rows = sum(1 for _row in csv.DictReader(exported.open(encoding="utf-8"))) if exported.is_file() else None
    if rows != state["result"].get("rows"):
        return _("the result says {claimed} rows, but the exported file holds {rows}: run the export itself.").format(
            claimed=state["result"].get("rows"), rows=rows
        )
    return None


@register(
    "10.4",
    N_(
        "A long call can come back as a task (resultType task): the client polls tasks/get with its id until the "
        "task ends, and the call's result is the completed task's."
    ),
    N_("§4 Work that outlives its request: a handle"),
    of_the_lesson=True,
)
def check_task_run(trace: Any) -> str | None:
    if not isinstance(trace, Trace):
        return _("pass the labkit.Trace the host recorded the archive_orders call into.")
    responses = {e.payload.get("id"): e.payload for e in trace.of_kind(Kind.JSONRPC_RESPONSE)}
    requests = [e.payload for e in trace.of_kind(Kind.JSONRPC_REQUEST)]
    calls = [r for r in requests if r.get("method") == "tools/call"]
    created = [responses[r["id"]].get("result") or {} for r in calls if r["id"] in responses]
    tasks = [c["taskId"] for c in created if c.get("resultType") == "task"]
    if not tasks:
        return _(
            "no tools/call in this trace was answered with a task: the host must declare the Tasks extension "
            "(Host(..., tasks=True)) for the server to send one."
        )
    polls = [r for r in requests if r.get("method") == "tasks/get" and r["params"].get("taskId") == tasks[-1]]
    states = [responses[p["id"]].get("result", {}) for p in polls if p["id"] in responses]
    if not states:
        return _("the task {task} was never polled with tasks/get.").format(task=tasks[-1])
    last = states[-1]
    if last.get("status") != "completed" or not isinstance(last.get("result"), dict):
        return _("the last tasks/get says {status!r}, with no result: poll until the task ends.").format(
            status=last.get("status")
        )
    done = last["result"].get("structuredContent") or {}
    exported = data_dir() / "exports" / str(done.get("file"))
    if not exported.is_file():
        return _("the completed task names the file {file!r}, which is not in the exports folder.").format(
            file=done.get("file")
        )
    return None
