"""Every planted attack, run by the naive model against real servers: it works with defences off, fails with them on."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from labkit.host import ServerSpec, ServerStartError
from labkit.lessons import ATTACKS, CANARIES, TOKEN_CANARY, TOKEN_ENV, prepare_lab, run_attack, run_attacks, story
from labkit.security import HIDDEN, Defences

OFF, ON = Defences.none(), Defences.all()


@pytest.fixture(scope="module")
async def runs():
    """All attacks, defences off and on, two runs at a time, as notebook 07 runs them (real stdio servers).

    Side by side, an "on" run that read the log of the "off" run beside it would see the canaries that
    run leaked: the tests below that every attack fails with defences on would then fail.
    """
    prepare_lab()
    both_ways = (("off", OFF), ("on", ON))
    return await run_attacks({(name, mode): defences for name in ATTACKS for mode, defences in both_ways})


async def test_a_lab_planted_by_an_earlier_process_is_planted_again_so_the_token_is_there_to_steal(monkeypatch):
    prepare_lab()
    monkeypatch.delenv(TOKEN_ENV)  # what a new kernel sees: the key on disk, no token in its environment
    run = await run_attack("rug-pull", OFF)
    assert run.succeeded, run.evidence
    assert any(TOKEN_CANARY in json.dumps(call["arguments"]) for call in run.received)


async def test_each_run_side_by_side_reads_only_what_its_own_servers_received(runs):
    tags = {key: {call["run"] for call in run.received} for key, run in runs.items() if run.received}
    assert all(len(tag) == 1 and None not in tag for tag in tags.values()), tags
    assert len({next(iter(tag)) for tag in tags.values()}) == len(tags), "two runs share a name"


async def test_runs_side_by_side_come_back_in_the_plan_s_order_with_the_outcomes_of_runs_one_by_one():
    prepare_lab()
    plan = {("result-injection", "on"): ON, ("result-injection", "off"): OFF, ("rug-pull", "off"): OFF}
    side_by_side = await run_attacks(plan)
    assert list(side_by_side) == list(plan)
    for (name, mode), defences in plan.items():
        alone = await run_attack(name, defences)
        together = side_by_side[name, mode]
        assert together.outcome() == alone.outcome(), (name, mode)
        calls = [[(c["server"], c["tool"]) for c in run.received] for run in (together, alone)]
        assert calls[0] == calls[1], (name, mode)


async def test_a_misspelt_attack_or_uncalled_defences_are_named_before_any_server_starts():
    with pytest.raises(ValueError, match=r"no planted attack is called 'rug-pul'; the attacks are: poison-text, "):
        await run_attacks({("poison-text", "off"): OFF, ("rug-pul", "off"): OFF})
    with pytest.raises(TypeError, match=r"the defences for 'poison-text' are a method, not Defences: .*brackets"):
        await run_attacks({("poison-text", "on"): Defences.all})


async def test_a_run_side_by_side_that_fails_raises_its_own_error_not_a_group(monkeypatch):
    missing = replace(ATTACKS["path-escape"], name="missing", servers=(ServerSpec("untrusted.missing"),))
    monkeypatch.setitem(ATTACKS, "missing", missing)
    with pytest.raises(ServerStartError, match=r"No module named servers\.untrusted\.missing"):
        await run_attacks({("missing", "off"): OFF, ("path-escape", "off"): OFF})


def test_there_are_nine_planted_attacks():
    assert len(ATTACKS) == 9


@pytest.mark.parametrize("name", list(ATTACKS))
async def test_the_attack_succeeds_with_defences_off(runs, name):
    run = runs[(name, "off")]
    assert run.succeeded, f"{name}: the planted attack did not work against an undefended host"
    assert run.entered is not None


@pytest.mark.parametrize("name", list(ATTACKS))
async def test_the_attack_is_blocked_with_defences_on(runs, name):
    run = runs[(name, "on")]
    assert not run.succeeded, f"{name}: {run.evidence}"
    assert run.stopped is not None and run.entered is not None and run.stopped.seq > run.entered.seq


async def test_no_canary_reaches_any_server_with_defences_on(runs):
    for (name, mode), run in runs.items():
        if mode != "on":
            continue
        assert not [c for c in run.received if any(x in json.dumps(c["arguments"]) for x in CANARIES)], name
        sent = [e.payload for e in run.trace.of_kind("jsonrpc.request") if e.payload.get("method") == "tools/call"]
        assert not [p for p in sent if any(x in json.dumps(p) for x in CANARIES)], name


async def test_the_canaries_do_leak_without_defences(runs):
    leaked = {
        x
        for (name, mode), run in runs.items()
        if mode == "off"
        for c in run.received
        for x in CANARIES
        if x in json.dumps(c["arguments"])
    }
    assert leaked == set(CANARIES)


async def test_audit_lines_equal_calls_plus_blocks_plus_denials(runs):
    for key, run in runs.items():
        proposed = sum(len(e.meta.get("call_ids") or []) for e in run.trace.of_kind("model.response"))
        sent = [e for e in run.trace.of_kind("jsonrpc.request") if e.payload.get("method") == "tools/call"]
        decisions = [e.decision for e in run.audit.entries]
        refused = [d for d in decisions if d in ("blocked", "denied")]
        assert len(run.audit) == proposed == len(sent) + len(refused), key
        for entry in run.audit.entries:
            assert entry.server and entry.tool and len(entry.args_hash) == 12 and entry.decision and entry.outcome


async def test_a_withheld_tool_never_reaches_the_model(runs):
    for name in ("poison-text", "poison-unicode", "poison-ansi", "shadowing", "rug-pull", "rug-pull-schema"):
        run = runs[(name, "on")]
        bodies = [json.dumps(e.payload["body"]["tools"]) for e in run.trace.of_kind("model.request")]
        assert bodies and not [b for b in bodies if run.attack.marker in b or "\\u001b" in b], name


async def test_with_defences_on_the_model_reads_no_hidden_characters(runs):
    for (name, mode), run in runs.items():
        if mode == "on":
            for event in run.trace.of_kind("model.request"):
                assert not HIDDEN.search(json.dumps(event.payload["body"], ensure_ascii=False)), name


async def test_the_story_marks_where_it_entered_and_where_it_stopped(runs):
    table = story(runs[("result-injection", "on")])
    marks = table[table[""] != ""]
    assert list(marks[""]) == ["◀ entered", "■ stopped"]
    assert "outside the workspace" in marks.iloc[1]["summary"]
    # each call the model made says why, from the reason the model sent with it (not words found in its notes)
    said = [s for s in table["summary"] if s.startswith("tool_use ")]
    assert said and all(" ← obeying the result of " in s or " ← the user's task needs " in s for s in said), said


async def test_a_person_is_asked_with_the_full_arguments(runs):
    run = runs[("result-injection", "on")]
    refused = [r for r in run.desk.requests if not r.approved]
    assert refused and "exfil.example" in refused[0].shown
    sink = [e for e in run.trace.of_kind("host.approval") if (e.name or "").endswith("send_message")]
    assert sink and f"all {len(sink[0].payload['arguments'])} characters" in sink[0].summary


async def test_untrusted_annotations_alone_make_the_difference_for_a_write():
    prepare_lab()
    trusting = await run_attack("unapproved-write", ON.without("hints"))
    assert trusting.succeeded, "with every other defence on, a readOnlyHint lie still skips the person"
    assert not (await run_attack("unapproved-write", ON)).succeeded


async def test_the_taint_rule_alone_asks_before_data_leaves():
    prepare_lab()
    run = await run_attack("result-injection", Defences.only("taint"))
    assert not run.succeeded
    asked = [r for r in run.desk.requests if r.tool.endswith("send_message")]
    assert asked and not asked[0].approved
    assert list(run.trace.of_kind("host.taint"))
