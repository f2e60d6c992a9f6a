"""Notebook 06's exercises 1 and 2 are judged on versioned test sets with the tool-choice scorer, not on one question.

A description tuned to the one question the old check asked passes no more; a method written in prose is judged by
the call that reached the real orders server.
"""

from __future__ import annotations

import anyio
import pytest

from labkit.lessons import ACTIVATION_SET, METHOD_SET, check, load_eval_set, run_activation_eval
from labkit.lessons.checks.nb06 import FIRST_DRAFT, _returns_library

GOOD = (
    "The shop's rules for returns and refunds: which goods can be returned (unused, worn, opened or broken), "
    "within how many days of delivery, and when and how the money is refunded. Use when a user wants to return "
    "or send back something they bought, asks for a refund or their money back. "
    "Not for order status or delivery tracking."
)
ONE_QUESTION = (  # the old solution: written for "Can I still return unused goods I received five days ago?"
    "Explain the shop's return rules: whether goods can be returned, within how many days, and when refunds "
    "are paid. Use when a user asks to return unused goods, about the days allowed for a return, or about refunds."
)
SKILL = """---
name: order-status
description: >-
  List the newest orders with one status: pending, shipped, delivered or cancelled. Use when a user
  asks which orders are pending, shipped, delivered or cancelled.
---
# Orders by status

## Method

1. Ask "Which status: pending, shipped, delivered or cancelled?" when the question names no status.
2. Call `query_orders(status=<pending|shipped|delivered|cancelled>, limit=5)`.
3. Answer "{count} {status} order(s) listed." for each result.
"""


@pytest.mark.parametrize("path", [ACTIVATION_SET, METHOD_SET])
def test_both_sets_are_versioned_with_cases_for_each_verdict_the_exercise_needs(path):
    eval_set = load_eval_set(path)
    assert (
        eval_set.version and len(eval_set.sha256) == 64 and len({c.id for c in eval_set.cases}) == len(eval_set.cases)
    )
    if path == ACTIVATION_SET:
        skills = {c.arguments.get("name") for c in eval_set.cases}
        assert {"returns", None} <= skills and len(skills) > 2  # its own questions, the others' and no-skill ones


def test_06_1_a_description_passes_on_the_whole_set_and_is_measured_against_the_draft():
    draft = anyio.run(run_activation_eval, _returns_library(FIRST_DRAFT))
    good = anyio.run(run_activation_eval, _returns_library(GOOD))
    assert good.accuracy == 1 and draft.accuracy < 1 and draft.simulated
    assert check("06.1", GOOD).passed


def test_06_1_a_description_fitted_to_one_question_fails_and_names_the_cases_it_misses():
    fitted = anyio.run(run_activation_eval, _returns_library(ONE_QUESTION))
    missed = [o.case.id for o in fitted.outcomes if not o.correct]
    assert missed and all(o.case.arguments.get("name") == "returns" for o in fitted.outcomes if not o.correct)
    result = check("06.1", ONE_QUESTION)
    assert not result.passed and all(case in result.message for case in missed)


def test_06_1_a_description_that_claims_too_much_is_a_false_call_on_a_case_the_draft_got_right():
    greedy = GOOD + " Also lists which orders are still pending."
    report = anyio.run(run_activation_eval, _returns_library(greedy))
    assert [o.case.id for o in report.outcomes if o.verdict == "false call"] == ["none-pending"]
    assert "none-pending" in check("06.1", greedy).message


def test_06_2_is_judged_by_the_call_the_orders_server_received():
    assert check("06.2", SKILL).passed
    three = check("06.2", SKILL.replace("limit=5", "limit=3"))
    assert not three.passed and "limit=3" in three.message
    prose = check("06.2", SKILL.replace("2. Call `query_orders(", "2. Look up `query_orders("))
    assert not prose.passed and "0 of 4" in prose.message


@pytest.mark.parametrize(
    ("key", "refused_answer", "broken"),
    [("06.1", "x" * 1025, "the description"), ("06.2", SKILL.replace("---\n", "", 1), "the SKILL.md")],
)
def test_06_1_and_06_2_judge_no_answer_they_cannot_read_and_say_why(key, refused_answer, broken):
    """One rule for both: an answer that is not a string is named by its type; one the parser refuses lists each rule
    it breaks. Neither reaches an evaluation run (no server is started)."""
    assert "as a string, not list." in check(key, ["a list"]).message
    refused = check(key, refused_answer)
    assert not refused.passed and f"{broken} breaks the format: " in refused.message
