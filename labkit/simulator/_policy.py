"""The simulated model's decision function: playbook, then a loaded skill, then summarise results, then the rules."""

from __future__ import annotations

from dataclasses import replace

from labkit._i18n import _

from ._answers import answer_results
from ._arguments import fit_arguments
from ._dialogue import Decision, Dialogue, PlannedCall
from ._naive import NAIVE_SCENARIO, obey
from ._playbooks import NO_SCENARIO, Scenario, resolve_tool, select_scenario
from ._rules import choose_tool
from ._skill_policy import follow_skill

__all__ = ["SIMULATED_PREFIX", "decide"]

SIMULATED_PREFIX = "[simulated] "


def decide(dialogue: Dialogue) -> Decision:
    """What the teaching model says next; a pure function, callable directly for benchmarks (notebook 01)."""
    skill_notes: list[str] = []  # why no skill was loaded, when the catalog was considered (notebook 06)
    decision = (
        _naive(dialogue)
        or _from_playbook(dialogue)
        or follow_skill(dialogue, skill_notes)
        or _after_results(dialogue)
        or _without_tools(dialogue)
        or choose_tool(dialogue)
    )
    decision.notes[:0] = skill_notes
    if len(decision.calls) > 1 and not dialogue.parallel:
        decision.notes.append(
            _("parallel tool use is off: keeping only the first of {n} calls").format(n=len(decision.calls))
        )
        decision.calls = decision.calls[:1]
    if not decision.literal:
        decision.calls = [_fitted(call, dialogue, decision.notes) for call in decision.calls]
    if decision.text and not decision.text.startswith(SIMULATED_PREFIX):
        decision.text = SIMULATED_PREFIX + decision.text
    if not decision.text and not decision.calls:
        decision.text = SIMULATED_PREFIX + _("I have nothing to add.")
    return decision


def _naive(dialogue: Dialogue) -> Decision | None:
    """Scenario "naive" (notebook 07): obey every instruction found in the context (`_naive.py`)."""
    return obey(dialogue) if dialogue.scenario == NAIVE_SCENARIO else None


def _fitted(call: PlannedCall, dialogue: Dialogue, notes: list[str]) -> PlannedCall:
    tool = dialogue.tool(call.name)
    if tool is None:
        return call
    arguments, dropped = fit_arguments(tool.schema, call.arguments)
    notes.extend(dropped)
    return PlannedCall(call.name, arguments)


def _from_playbook(dialogue: Dialogue) -> Decision | None:
    scenario = select_scenario(dialogue)
    if dialogue.scenario not in (None, NO_SCENARIO) and scenario is None:
        return Decision(
            _("Unknown scenario {name!r}; I answer without a playbook.").format(name=dialogue.scenario),
            notes=[_("no such scenario")],
        )
    if scenario is None or dialogue.choice.mode == "none":
        return None
    decision = scenario.step(dialogue)
    if decision is None:
        return None
    resolved = _resolved(scenario, decision, dialogue)
    if resolved is not None:
        turn = dialogue.assistant_turns + 1
        resolved.notes.insert(0, _("playbook {name!r}, turn {turn}").format(name=scenario.name, turn=turn))
    return resolved


def _resolved(scenario: Scenario, decision: Decision, dialogue: Dialogue) -> Decision | None:
    """Map the playbook's MCP names onto offered tools; give up on the playbook if one is missing."""
    offered = [t.name for t in dialogue.tools]
    calls = []
    for call in decision.calls:
        name = resolve_tool(call.name, offered) or (call.name if call.name in scenario.invents_tools else None)
        if name is None:
            return None
        calls.append(PlannedCall(name, call.arguments))
    choice = dialogue.choice
    if choice.mode == "tool" and [c.name for c in calls] != [choice.name]:
        return None
    if choice.mode == "any" and not calls:
        return None
    return Decision(decision.text, calls, list(decision.notes), decision.declined, decision.reason)


def _after_results(dialogue: Dialogue) -> Decision | None:
    last = dialogue.last
    if last is None or not last.results:
        return None
    left = [] if dialogue.parallel else _calls_left(dialogue)
    if left:
        # One call per turn (notebook 01 §7): the calls the question asks for come one after another, none dropped.
        note = _("parallel tool use is off: {n} more call(s) the question asks for, one per turn").format(n=len(left))
        return Decision("", left[:1], notes=[note])
    answer = answer_results(dialogue, since_question=not dialogue.parallel)
    return Decision(answer, notes=[_("tool results present: answering from them, not calling again")])


def _calls_left(dialogue: Dialogue) -> list[PlannedCall]:
    """The calls the question asks for, as the model would propose them all at once, not yet made in this dialogue."""
    wanted = choose_tool(replace(dialogue, parallel=True)).calls
    made = [call for message in dialogue.messages for call in message.calls]
    return [
        call
        for call in (_fitted(c, dialogue, []) for c in wanted)
        if not any(
            m.name == call.name and all(m.arguments.get(k) == v for k, v in call.arguments.items()) for m in made
        )
    ]


def _without_tools(dialogue: Dialogue) -> Decision | None:
    if not dialogue.tools:
        return Decision(
            _("No tools were offered, so I answer from what I know: this is a simulated model and knows nothing.")
        )
    if dialogue.choice.mode == "none":
        return Decision(_("I answer without tools because tool_choice is 'none'."))
    return None
