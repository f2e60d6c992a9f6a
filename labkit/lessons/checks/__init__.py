"""The checks behind every notebook's exercises, one module per notebook (`nb00.py`, `nb01.py`, …), by key."""

from __future__ import annotations

import importlib
import pkgutil

from .._exercises import Exercise

__all__ = ["EXERCISES"]


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
