"""The checks behind every notebook's exercises, one module per notebook (`nb00.py`, `nb01.py`, …), by key."""

from __future__ import annotations

from typing import Any

from labkit._i18n import _, listing

from .._exercises import TODO, Exercise, Verdict
from . import nb00, nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10

__all__ = ["EXERCISES", "NOTEBOOKS", "check"]

NOTEBOOKS = (nb00, nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10)
"""The checks' modules, one per notebook: a module counts once it is listed here."""


def _collect() -> dict[str, Exercise]:
    """Every checker a listed module marked with `@register`, by exercise key."""
    found: dict[str, Exercise] = {}
    for module in NOTEBOOKS:
        for value in vars(module).values():
            exercise = getattr(value, "exercise", None)
            if isinstance(exercise, Exercise):
                found[exercise.key] = exercise
    return found


EXERCISES: dict[str, Exercise] = _collect()
"""Every exercise of the lab, by key ("01.2"), collected from the checks' modules."""


def check(key: str, answer: Any) -> Verdict:
    """Check the learner's answer to exercise `key`; never raises, so the notebook runs on (notebook 00)."""
    exercise = EXERCISES.get(key) if isinstance(key, str) else None
    if exercise is None:
        return Verdict(
            key,
            False,
            _("There is no exercise {key!r}; the lab's exercises are {keys}.").format(
                key=key, keys=listing(sorted(EXERCISES))
            ),
        )
    if answer is TODO:
        return Verdict(
            key, False, _("Exercise {key}: not yet answered. Goal: {goal}").format(key=key, goal=_(exercise.goal))
        )
    try:
        problem = exercise.checker(answer)
    except Exception as error:  # noqa: BLE001 - a learner's answer may be of any shape
        problem = _("the answer could not be checked ({error_type}: {error})").format(
            error_type=type(error).__name__, error=error
        )
    if exercise.of_the_lesson:
        done = _("Check {key} of the run above (not an exercise: nothing to write): done. {goal}")
        not_yet = _(
            "Check {key} of the run above (not an exercise): not yet. Goal: {goal} What is still wrong: {problem} "
            "Reread {section}."
        )
    else:
        done = _("Exercise {key}: done. {goal}")
        not_yet = _("Exercise {key}: not yet. Goal: {goal} What is still wrong: {problem} Reread {section}.")
    if problem is None:
        return Verdict(key, True, done.format(key=key, goal=_(exercise.goal)))
    return Verdict(
        key, False, not_yet.format(key=key, goal=_(exercise.goal), problem=problem, section=_(exercise.section))
    )
