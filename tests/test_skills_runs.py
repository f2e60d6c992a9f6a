"""Skills in real runs: the real servers, the real SDK clients, the simulated model, progressive loading, the gate."""

from __future__ import annotations

import pytest

from labkit.host import Api, scripted_answers, scripted_form
from labkit.lessons import (
    SKILLS_DIR,
    SkillRun,
    context_ledger,
    context_table,
    run_with_skills,
    scripted_approver,
    upfront_table,
)
from labkit.skills import SkillLibrary, workspace_tools
from labkit.trace import Trace, estimate_tokens

LIBRARY = SkillLibrary.from_folders(SKILLS_DIR)
WITH_UNTRUSTED = SkillLibrary.from_folders(SKILLS_DIR, SKILLS_DIR / "untrusted")
TRAP_QUESTION = "Chart the payment-service error trend since last night."


@pytest.fixture(scope="module")
async def family():
    return await run_with_skills(
        "How many accounts does the family plan allow?", skills=LIBRARY, servers=["plans"], required_tools=["get_plan"]
    )


async def test_the_plan_skill_drives_get_plan_family_6(family) -> None:
    assert family.result.delivered
    assert family.tool_calls == [
        ("load_skill", {"name": "plan-questions"}),
        ("read_skill_resource", {"skill": "plan-questions", "path": "references/plan-rules.md"}),
        ("get_plan", {"plan": "family"}),
    ]
    reply = next(e for e in family.trace.of_kind("jsonrpc.response") if e.name == "get_plan")
    assert reply.payload["result"]["structuredContent"]["max_accounts"] == 6
    assert "The family plan allows up to 6 accounts" in family.result.answer


async def test_the_tiers_load_in_order_catalog_body_resource(family) -> None:
    loads = family.trace.of_kind("skill.catalog", "skill.load", "skill.resource")
    assert [(e.meta["tier"], e.name, e.meta["requested_by"]) for e in loads] == [
        (1, "catalog", "host"),
        (2, "plan-questions", "model"),
        (3, "plan-questions/references/plan-rules.md", "model"),
    ]
    requests = family.trace.of_kind("model.request")
    assert loads[0].seq < requests[0].seq < loads[1].seq < requests[1].seq < loads[2].seq < requests[2].seq
    body = family.trace.of_kind("model.request")[0].payload["body"]
    assert "<available_skills>" in body["system"] and "## Method" not in str(body)


async def test_sizes_are_the_bytes_and_estimated_tokens_of_what_was_sent(family) -> None:
    for event in family.trace.of_kind("skill.catalog", "skill.load", "skill.resource"):
        text = event.payload["text"]
        assert event.meta["bytes"] == len(text.encode()) and event.meta["tokens"] == estimate_tokens(text)
    assert event.payload["text"] == (SKILLS_DIR / "plan-questions" / "references" / "plan-rules.md").read_text()
    table = context_table(family.trace)
    assert list(table.index) == [1, 2, 3, 4]
    assert list(table["tier 2 bodies"] > 0) == [False, True, True, True]
    assert list(table["tier 3 resources"] > 0) == [False, False, True, True]
    assert table["skill tokens"].is_monotonic_increasing
    ledger = context_ledger(family.trace)
    assert ledger[ledger["new"]]["turn"].tolist() == [1, 2, 3]
    upfront = upfront_table(family.trace, LIBRARY)
    assert (upfront["progressive (tokens)"] < upfront["every SKILL.md up front (tokens)"]).all()


async def test_an_unneeded_resource_is_not_loaded_and_a_needed_one_is(family) -> None:
    assert "pricing.md" not in str(family.tool_calls)
    priced = await run_with_skills(
        "What does my household's plan cost, and how many accounts does it allow?",
        skills=LIBRARY,
        servers=["plans"],
        required_tools=["get_plan"],
    )
    paths = [args["path"] for name, args in priced.tool_calls if name == "read_skill_resource"]
    assert paths == ["references/plan-rules.md", "references/pricing.md"]
    assert ("get_plan", {"plan": "family"}) in priced.sent  # "household" is family, per the rules file


async def test_the_personal_plan_is_3_and_a_missing_plan_is_asked_for() -> None:
    run = await run_with_skills(
        "How many accounts can I have?",
        skills=LIBRARY,
        servers=["plans"],
        required_tools=["get_plan"],
        ask_user=scripted_answers("The personal plan."),
    )
    relay = run.trace.of_kind("host.relay")[0]
    first_call = next(e for e in run.trace.of_kind("jsonrpc.request") if e.name == "get_plan")
    assert "Which plan do you mean" in relay.summary and relay.seq < first_call.seq
    assert run.sent == [("get_plan", {"plan": "personal"})]
    assert "up to 3 accounts" in run.result.answer


async def test_a_question_no_description_matches_loads_no_skill() -> None:
    run = await run_with_skills("What is the weather in Hangzhou?", skills=LIBRARY, servers=["plans"])
    assert not run.trace.of_kind("skill.load") and run.tool_calls == []
    decision = run.trace.of_kind("model.response")[0].meta["decision"]
    assert "no skill is loaded" in " ".join(decision)


async def test_naming_a_skill_activates_it_explicitly() -> None:
    run = await run_with_skills(
        "Use the code-review skill.",
        skills=LIBRARY,
        local_tools=workspace_tools(SKILLS_DIR.parent),
        required_tools=["check_python"],
        ask_user=scripted_answers("skills/code-review/assets/discount.py"),
    )
    assert "named by the user" in run.trace.of_kind("model.response")[0].meta["decision"][0]
    assert [name for name, _ in run.tool_calls] == ["load_skill", "read_skill_resource", "read_file", "check_python"]
    assert run.result.delivered and "7 finding(s)" in run.result.answer
    # The file it read fed the check; the answer is the check's findings, not the file flattened after them.
    assert "read_file" not in run.result.answer and "DISCOUNTS" not in run.result.answer


async def test_the_weekly_report_skill_uses_the_prompt_then_query_orders() -> None:
    run = await run_with_skills(
        "Write the weekly order report for 2026-W44.",
        skills=LIBRARY,
        servers=["orders"],
        required_tools=["query_orders"],
    )
    methods = [e.payload["method"] for e in run.trace.of_kind("jsonrpc.request") if e.round >= 1]
    assert methods == ["prompts/get"] + ["tools/call"] * 4
    prompt = next(e for e in run.trace.of_kind("jsonrpc.request") if e.payload["method"] == "prompts/get")
    assert prompt.payload["params"] == {
        **prompt.payload["params"],
        "name": "weekly_report",
        "arguments": {"week": "2026-W44"},
    }
    assert [args["status"] for _, args in run.sent] == ["pending", "shipped", "delivered", "cancelled"]
    assert run.trace.of_kind("skill.prompt")[0].meta["tier"] == 3 and run.result.delivered


async def test_a_prompt_no_loaded_skill_names_is_refused() -> None:
    run = await run_with_skills("Use the plan-questions skill for the family plan.", skills=LIBRARY, servers=["orders"])
    handler = next(t.handler for t in run.loader.tools if t.tool.name == "get_skill_prompt")
    refused = await handler({"server": "orders", "name": "weekly_report", "arguments": {"week": "2026-W44"}})
    assert refused.is_error and "no loaded skill names the prompt" in refused.text


async def test_a_skill_saying_approved_does_not_approve_the_default_approver_sends_nothing() -> None:
    run = await run_with_skills(TRAP_QUESTION, skills=WITH_UNTRUSTED, servers=["charts"])
    proposed = dict(run.tool_calls)["render_error_trend"]
    assert proposed["approved"] is True
    gate = next(e for e in run.trace.of_kind("host.gate") if e.name == "render_error_trend")
    assert gate.meta["ignored"] == ["approved"] and (gate.meta["outcome"], gate.meta["by"]) == ("denied", "user")
    assert run.sent == [] and run.audit.entries[-1].outcome == "not sent"


async def test_the_gate_asks_the_user_whatever_the_skill_says() -> None:
    trace = Trace()
    refused = await run_with_skills(
        TRAP_QUESTION, skills=WITH_UNTRUSTED, servers=["charts"], trace=trace, approver=scripted_approver(trace, False)
    )
    assert [e.kind for e in trace.of_kind("host.approval", "user.answer")] == ["host.approval", "user.answer"]
    assert refused.sent == []
    trace = Trace()
    approved = await run_with_skills(
        TRAP_QUESTION,
        skills=WITH_UNTRUSTED,
        servers=["charts"],
        trace=trace,
        approver=scripted_approver(trace, True),
        elicit=scripted_form({"space": "personal"}),
    )
    assert [name for name, _ in approved.sent] == ["render_error_trend", "render_error_trend"]  # input_required retry
    assert approved.audit.entries[-1].decision == "allowed (user)" and "personal space" in approved.result.answer


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_the_openai_apis_load_the_same_skill_and_get_the_same_answer(api: Api, family) -> None:
    run = await run_with_skills(
        "How many accounts does the family plan allow?",
        skills=LIBRARY,
        servers=["plans"],
        required_tools=["get_plan"],
        api=api,
    )
    assert run.tool_calls == family.tool_calls and run.result.answer == family.result.answer
    assert context_table(run.trace)["skill bytes"].tolist()[-1] > 0


def test_results_come_back_in_the_order_the_calls_were_sent_whatever_order_they_answered_in() -> None:
    trace = Trace()
    for ref, plan in ((7, "family"), (8, "personal")):
        trace.record(
            "client",
            "server",
            "jsonrpc.request",
            f"tools/call get_plan {plan}",
            ref=ref,
            name="get_plan",
            payload={"method": "tools/call", "params": {"name": "get_plan", "arguments": {"plan": plan}}},
        )
    for ref, accounts in ((8, 3), (7, 6)):  # the second call answered first
        trace.record(
            "server",
            "client",
            "jsonrpc.response",
            "tools/call →",
            ref=ref,
            name="get_plan",
            payload={"result": {"structuredContent": {"max_accounts": accounts}}},
        )
    run = SkillRun("Both plans?", trace, result=None, audit=None, loader=None)  # type: ignore[arg-type]  # unused here
    assert [result["max_accounts"] for result in run.returned("get_plan")] == [6, 3]
    assert run.returned("list_plans") == []


async def test_two_plans_asked_at_once_return_each_plan_s_own_answer() -> None:
    run = await run_with_skills(
        "How many accounts do the family and personal plans allow?",
        skills=LIBRARY,
        servers=["plans"],
        required_tools=["get_plan"],
    )
    allowed = {"family": 6, "personal": 3}
    assert len(run.sent) == 2
    assert [r["max_accounts"] for r in run.returned("get_plan")] == [allowed[args["plan"]] for _, args in run.sent]
