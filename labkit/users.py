"""Scripted users: answer the host's forms and the model's questions when no person is at the keyboard."""

from __future__ import annotations

from typing import Any

from .host import Asker, Elicitor

__all__ = ["scripted_answers", "scripted_form"]


def scripted_form(answers: dict[str, Any], *, say: bool = False) -> Elicitor:
    """A form-filler that always submits `answers` (CI's stand-in for the widget form) (notebook 03)."""

    async def fill(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        if say:
            print(f"[scripted user] {message!r} -> {answers}")
        return dict(answers)

    return fill


def scripted_answers(*replies: str) -> Asker:
    """Replies to the model's questions in order, the last one repeated (notebook 03)."""
    queue: list[str] = list(replies)

    async def reply(question: str) -> str:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return reply

