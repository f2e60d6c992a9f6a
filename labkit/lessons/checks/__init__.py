"""The checks behind every notebook's exercises, one module per notebook (`nb00.py`, `nb01.py`, …), by key."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from labkit._i18n import _

from .._exercises import TODO, Exercise, Verdict

__all__ = ["EXERCISES", "check"]


def _collect() -> dict[str, Exercise]:
    """Every checker a module here marked with `@register`, by exercise key."""
    found: dict[str, Exercise] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        for value in vars(module).values():
            exercise = getattr(value, "exercise", None)
            if isinstance(exercise, Exercise):
                found[exercise.key] = exercise
    return found


EXERCISES: dict[str, Exercise] = _collect()
"""Every exercise of the lab, by key ("01.2"), collected from the checks' modules."""


def check(key: str, answer: Any) -> Verdict:
    """Check the learner's answer to exercise `key`; never raises, so the notebook runs on (notebook 00)."""
    exercise = EXERCISES.get(key)
    if exercise is None:
        return Verdict(
            key,
            False,
            _("There is no exercise {key!r}; the lab's exercises are {keys}.").format(
                key=key, keys=", ".join(sorted(EXERCISES))
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
    if problem is None:
        return Verdict(key, True, _("Exercise {key}: done. {goal}").format(key=key, goal=_(exercise.goal)))
    return Verdict(
        key,
        False,
        _("Exercise {key}: not yet. Goal: {goal} What is still wrong: {problem} Reread {section}.").format(
            key=key, goal=_(exercise.goal), problem=problem, section=_(exercise.section)
        ),
    )
