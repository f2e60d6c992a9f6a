"""Checks for notebook 06: a description that activates, a SKILL.md that steers a call, an approver, the tier costs."""

from __future__ import annotations

import inspect
from functools import partial
from typing import Any

import yaml

from labkit._i18n import N_, _

from ...trace import Kind
from .._exercises import register, run_sync

__all__ = ["check_activation", "check_approver", "check_costs", "check_skill_file"]

RETURNS_YES = "Can I still return unused goods I received five days ago?"
RETURNS_NO = "Which orders are still pending?"
STATUS_QUESTIONS = {"Which orders are still pending?": "pending", "Show me the cancelled orders.": "cancelled"}
FAMILY_QUESTION = "How many accounts does the family plan allow?"
_RETURNS_BODY = '# Returns\n\n## Method\n\n1. Answer "{text}" for each result.\n'


async def _first_turn(library: Any, question: str) -> list[tuple[str, dict[str, Any] | None]]:
    """The model's first reply to `question` with `library` in its catalog: the real SDK client, one request."""
    from ...host import Conversation, select_model
    from ...skills import SkillLoader
    from ...trace import Trace
    from .. import BASE_PROMPT
    from .._model import make_client

    trace = Trace()
    loader = SkillLoader(library, trace)
    conversation = Conversation(
        make_client("anthropic", trace=trace),
        select_model("anthropic").model,
        [t.tool for t in loader.tools],
        system=loader.system_prompt(BASE_PROMPT),
    )
    conversation.add_user(question)
    turn = await conversation.ask()
    return [(c.name, c.arguments) for c in turn.tool_calls]


@register(
    "06.1",
    N_("The catalog's description decides activation: it must match the task's words, and only those."),
    N_("§5 Activation: from the description, by name, or not at all"),
)
def check_activation(answer: Any) -> str | None:
    from ...skills import SkillError, SkillLibrary, parse_skill
    from .. import SKILLS_DIR

    if not isinstance(answer, str):
        return _("answer_1 must be the description as a string, not {type_name}.").format(
            type_name=type(answer).__name__
        )
    try:
        front = yaml.safe_dump({"name": "returns", "description": answer}, allow_unicode=True, width=1000)
        skill = parse_skill(f"---\n{front}---\n{_RETURNS_BODY}", "returns")
    except SkillError as error:
        return _("the description breaks the format: ") + "; ".join(error.problems) + "."
    library = SkillLibrary.from_folders(SKILLS_DIR).with_skill(skill)
    loaded_yes = run_sync(lambda: _first_turn(library, RETURNS_YES))
    if ("load_skill", {"name": "returns"}) not in loaded_yes:
        chose = (loaded_yes[0][1] or {}).get("name") if loaded_yes else None
        return (
            _("asked {RETURNS_YES!r}, the model did not load 'returns'").format(RETURNS_YES=RETURNS_YES)
            + (
                _(" but {chose!r}, whose description shares more words").format(chose=chose)
                if chose
                else _(": fewer than 2 words shared")
            )
            + _(". Use the question's own words (the model's stemming is crude: 'returned' is not 'return').")
        )
    loaded_no = run_sync(lambda: _first_turn(library, RETURNS_NO))
    if ("load_skill", {"name": "returns"}) in loaded_no:
        return _(
            "asked {RETURNS_NO!r}, the model loaded 'returns' too: the description shares 2 or more "
            "words with it. Leave out words that belong to order lists, or put them in a 'Not for …' "
            "sentence."
        ).format(RETURNS_NO=RETURNS_NO)
    return None


@register(
    "06.2",
    N_("A SKILL.md is front matter plus a body; its Method steers real tool calls."),
    N_("§1 A skill is a folder and §4 The plan question, through the skill"),
)
def check_skill_file(answer: Any) -> str | None:
    from ...simulator import read_method
    from ...skills import SkillError, SkillLibrary, parse_skill
    from .. import SKILLS_DIR, run_with_skills

    if not isinstance(answer, str):
        return _("answer_2 must be the whole SKILL.md as a string, not {type_name}.").format(
            type_name=type(answer).__name__
        )
    try:
        skill = parse_skill(answer, "order-status")
    except SkillError as error:
        return _("the SKILL.md breaks the format: ") + "; ".join(error.problems) + "."
    if not any(step.verb == "call" and step.target == "query_orders" for step in read_method(skill.body)):
        return _("its '## Method' has no numbered step like  3. Call `query_orders(status=..., limit=...)`.")
    library = SkillLibrary.from_folders(SKILLS_DIR).with_skill(skill)
    for question, status in STATUS_QUESTIONS.items():
        run = run_sync(
            partial(run_with_skills, question, skills=library, servers=["orders"], required_tools=["query_orders"])
        )
        loaded = [e.name for e in run.trace.of_kind(Kind.SKILL_LOAD)]
        if loaded != ["order-status"]:
            return _(
                "asked {question!r}, the model loaded {loaded}, not 'order-status'; check the description."
            ).format(question=question, loaded=loaded or "no skill")
        wanted = [("query_orders", {"status": status, "limit": 5})]
        if run.sent != wanted:
            return _("asked {question!r}, the orders server received {sent}, not {wanted}.").format(
                question=question, sent=run.sent, wanted=wanted
            )
    return None


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
