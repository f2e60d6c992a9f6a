"""Exercise checks: each names its learning goal, and an unanswered exercise says "not yet" without stopping."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from mcp_types import CallToolResult, TextContent

__all__ = ["TODO", "Exercise", "Verdict", "register", "result_text", "run_sync"]

_T = TypeVar("_T")

TODO: Any = ...
"""What an exercise cell holds until the learner answers it (`answer = TODO`)."""

Checker = Callable[[Any], str | None]
"""Returns None when the answer is right, else one sentence saying what is still wrong."""


@dataclass(frozen=True)
class Exercise:
    """One exercise: where it is, the goal it teaches, the section to reread, and its check (notebook 00)."""

    key: str
    goal: str
    section: str
    checker: Checker
    of_the_lesson: bool = False
    """A check of the lesson's own run (notebook 10 §4), not an exercise: nothing for the learner to write."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check, printed as one plain line so notebook outputs stay comparable."""

    key: str
    passed: bool
    message: str

    def __repr__(self) -> str:
        return self.message

    def __bool__(self) -> bool:
        return self.passed


def register(key: str, goal: str, section: str, *, of_the_lesson: bool = False) -> Callable[[Checker], Checker]:
    """Marks a checker as exercise `key`'s: `@register("01.2", "A tool call needs ...", "§3 The loop")`.

    `of_the_lesson=True` marks a check the lesson's body runs on its own run: its line says it is not an exercise.
    Nothing is registered on import: `labkit.lessons.checks.EXERCISES` collects the marked checkers.
    """

    def wrap(checker: Checker) -> Checker:
        exercise = Exercise(key, goal, section, checker, of_the_lesson)
        setattr(checker, "exercise", exercise)  # noqa: B010 - a function's attribute
        return checker

    return wrap


def run_sync(make: Callable[[], Awaitable[_T]]) -> _T:
    """Run a coroutine to the end from a checker: on a fresh event loop in a worker thread, because the
    notebook's own loop is busy running the check cell (notebook 00)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, make()).result()  # type: ignore[arg-type]


def result_text(result: CallToolResult) -> str:
    """The text blocks of a tool's result, joined: what a check quotes back to the learner."""
    return " ".join(block.text for block in result.content if isinstance(block, TextContent))
