"""Checks for notebook 06: a description that activates, a SKILL.md that steers a call, an approver, the tier costs."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import yaml

from labkit._i18n import N_, _, clauses

from .._exercises import register, run_sync
from .._tool_eval import call_text

__all__ = ["FIRST_DRAFT", "check_activation", "check_approver", "check_costs", "check_skill_file"]

_Parsed = TypeVar("_Parsed")

FAMILY_QUESTION = "How many accounts does the family plan allow?"
_RETURNS_BODY = '# Returns\n\n## Method\n\n1. Answer "{text}" for each result.\n'


FIRST_DRAFT = "Returns policy."
"""The `returns` skill's first description, which exercise 1 improves: its score on the test set is the baseline."""


def _returns_library(description: str) -> Any:
    """The lab's skills plus a `returns` skill with `description`; raises `SkillError` on a broken front matter."""
    from ...skills import SkillLibrary, parse_skill
    from .. import SKILLS_DIR

    front = yaml.safe_dump({"name": "returns", "description": description}, allow_unicode=True, width=1000)
    return SkillLibrary.from_folders(SKILLS_DIR).with_skill(parse_skill(f"---\n{front}---\n{_RETURNS_BODY}", "returns"))


def _parsed(answer: Any, parse: Callable[[str], _Parsed], not_text: str, broken: str) -> _Parsed | str:
    """`parse(answer)`, or the sentence saying why it cannot be judged: `not_text` for an answer that is not a string,
    `broken` and each rule it breaks for one that `parse` refuses with a `SkillError`."""
    from ...skills import SkillError

    if not isinstance(answer, str):
        return not_text.format(type_name=type(answer).__name__)
    try:
        return parse(answer)
    except SkillError as error:
        return broken + clauses(error.problems) + "."


def _wrong_cases(report: Any) -> str:
    """The cases a report got wrong, one line each: the question, what was expected, what the model did."""
    return "".join(
        _("\n  {case}: {question!r} expected {expected}, got {called} ({verdict})").format(
            case=o.case.id,
            question=o.case.question,
            expected=call_text(o.case.tool, o.case.arguments),
            called=call_text(o.called, o.arguments),
            verdict=_(o.verdict),
        )
        for o in report.outcomes
        if not o.correct
    )


@register(
    "06.1",
    N_("A description is judged on a test set: it must load the skill for every question it is for, and no other."),
    N_("§5 Activation: from the description, by name, or not at all"),
)
def check_activation(answer: Any) -> str | None:
    from .._skill_eval import run_activation_eval

    library = _parsed(
        answer,
        _returns_library,
        _("answer_1 must be the description as a string, not {type_name}."),
        _("the description breaks the format: "),
    )
    if isinstance(library, str):
        return library
    draft = run_sync(lambda: run_activation_eval(_returns_library(FIRST_DRAFT)))
    report = run_sync(lambda: run_activation_eval(library))
    right_before = {o.case.id for o in draft.outcomes if o.correct}
    broken = [o for o in report.outcomes if o.case.id in right_before and not o.correct]
    missed = [o for o in report.outcomes if o.case.arguments.get("name") == "returns" and not o.correct]
    if not broken and not missed and report.accuracy > draft.accuracy:
        return None
    problem = _(
        "on the test set {name} {version}, your description scores {accuracy:.3f} against the first draft's "
        "{draft:.3f}; {broken} case(s) the draft got right are now wrong. The cases it gets wrong:"
    ).format(
        name=report.eval_set.name,
        version=report.eval_set.version,
        accuracy=report.accuracy,
        draft=draft.accuracy,
        broken=len(broken),
    )
    simulated = _(
        "\n(The simulated model, not a real one, loads the skill whose description shares the most content words "
        "with the question, at least 2, and skips sentences starting 'Not'. Its rule; §5.)"
    )
    return problem + _wrong_cases(report) + (simulated if report.simulated else "")


@register(
    "06.2",
    N_("A SKILL.md is front matter plus a body; what it is judged on is the call its method makes."),
    N_("§1 A skill is a folder and §4 The plan question, through the skill"),
)
def check_skill_file(answer: Any) -> str | None:
    from ...simulator import read_method
    from ...skills import SkillLibrary, parse_skill
    from .. import SKILLS_DIR
    from .._skill_eval import run_method_eval

    skill = _parsed(
        answer,
        lambda text: parse_skill(text, "order-status"),
        _("answer_2 must be the whole SKILL.md as a string, not {type_name}."),
        _("the SKILL.md breaks the format: "),
    )
    if isinstance(skill, str):
        return skill
    report = run_sync(lambda: run_method_eval(SkillLibrary.from_folders(SKILLS_DIR).with_skill(skill)))
    if report.accuracy == 1:
        return None
    problem = _(
        "on the test set {name} {version}, {right} of {cases} questions sent the orders server the expected call. "
        "The others:"
    ).format(
        name=report.eval_set.name,
        version=report.eval_set.version,
        right=sum(o.correct for o in report.outcomes),
        cases=len(report.outcomes),
    )
    steps = [step for step in read_method(skill.body) if step.verb == "call" and step.target == "query_orders"]
    simulated = _(
        "\n(The simulated model, not a real one, follows only a numbered '## Method' list whose steps start with "
        "Read, Ask, Call, Prompt or Answer, e.g. 2. Call `query_orders(status=<a|b>, limit=5)`. Its limit; §1.)"
    )
    return problem + _wrong_cases(report) + (simulated if report.simulated and not steps else "")


@register(
    "06.3",
    N_("Only the user (the approver) approves a write; a skill or the model's `approved` field cannot."),
    N_("§7 A skill cannot approve anything"),
)
def check_approver(answer: Any) -> str | None:
    from ...host import scripted_form
    from ...skills import SkillLibrary
    from .. import SKILLS_DIR, run_with_skills

    if not inspect.iscoroutinefunction(answer) or len(inspect.signature(answer).parameters) != 3:
        return _("answer_3 must be an `async def` function of three parameters (server, tool, arguments).")
    probes = [
        (("charts", "render_error_trend", {"service": "order-service", "since": "2026-10-29T20:00"}), True),
        (
            (
                "charts",
                "render_error_trend",
                {"service": "order-service", "since": "2026-10-29T20:00", "approved": True},
            ),
            True,
        ),
        (
            (
                "charts",
                "render_error_trend",
                {"service": "payment-service", "since": "2026-10-29T20:00", "approved": True},
            ),
            False,
        ),
        (("charts", "delete_chart", {"service": "order-service", "approved": True}), False),
    ]
    for arguments, expected in probes:
        said = run_sync(partial(answer, *arguments))
        if said is not expected:
            return _("asked about {tool}({arguments}), your approver said {said!r}, not {expected}.").format(
                tool=arguments[1], arguments=arguments[2], said=said, expected=expected
            )
    library = SkillLibrary.from_folders(SKILLS_DIR, SKILLS_DIR / "untrusted")
    for service, sent in (("order-service", True), ("payment-service", False)):
        question = f"Chart the {service} error trend since last night."
        run = run_sync(
            partial(
                run_with_skills,
                question,
                skills=library,
                servers=["charts"],
                approver=answer,
                elicit=scripted_form({"space": "personal"}),
            )
        )
        if bool(run.sent) is not sent:
            return (
                _("in the real run for {service}, the chart was not sent.")
                if sent
                else _("in the real run for {service}, the chart was sent.")
            ).format(service=service)
    return None


@register(
    "06.4",
    N_("Read what each tier costs per turn, and what progressive loading saves."),
    N_("§2 Three tiers: what enters the context, and when"),
)
def check_costs(answer: Any) -> str | None:
    from ...skills import SkillLibrary
    from .. import SKILLS_DIR, context_table, run_with_skills, upfront_table

    if not isinstance(answer, dict) or set(answer) != {"resource_turn", "saved_tokens"}:
        return _("answer_4 must be a dict with exactly the keys 'resource_turn' and 'saved_tokens'.")
    library = SkillLibrary.from_folders(SKILLS_DIR)
    run = run_sync(
        lambda: run_with_skills(FAMILY_QUESTION, skills=library, servers=["plans"], required_tools=["get_plan"])
    )
    table = context_table(run.trace)
    turn = int(table[table["tier 3 resources"] > 0].index[0])
    if answer["resource_turn"] != turn:
        return _("resource_turn {resource_turn!r} is not the first turn whose request carried a tier-3 file.").format(
            resource_turn=answer["resource_turn"]
        )
    totals = upfront_table(run.trace, library).loc["all turns"]
    saved = int(totals["every SKILL.md up front (tokens)"] - totals["progressive (tokens)"])  # type: ignore[arg-type]  # one row's cells
    if answer["saved_tokens"] != saved:
        return _(
            "saved_tokens {saved_tokens!r} is not the difference of the two 'all turns' totals; take "
            "both numbers from the table, do not type them."
        ).format(saved_tokens=answer["saved_tokens"])
    return None
