"""The widget form's pure parts: which answers it refuses to send, and how a progress line ends."""

from __future__ import annotations

import asyncio
import sys
import types

import pytest
from mcp_types import ElicitRequestFormParams

from labkit import elicitation_callback, progress, scripted_form
from labkit.host import _progress
from labkit.host._user import SCRIPTED_USER_ENV, answer_problems

SPACE = {"properties": {"space": {"enum": ["personal", "team"], "title": "Space"}}, "required": ["space"]}


def test_an_answer_that_fits_the_schema_has_no_problems():
    assert answer_problems(SPACE, {"space": "team"}) == []


def test_a_required_choice_left_empty_is_refused_with_the_valid_values():
    assert answer_problems(SPACE, {}) == ["Space is required: pick one of personal, team"]
    assert answer_problems(SPACE, {"space": ""}) == ["Space is required: pick one of personal, team"]


def test_a_value_outside_the_enum_is_refused():
    assert answer_problems(SPACE, {"space": "everyone"}) == ["Space must be one of personal, team, not 'everyone'"]


def test_progress_outside_a_notebook_shows_nothing_and_passes_errors_through(capsys):
    with progress("waiting") as shown:
        shown.done("done")
    with pytest.raises(ValueError), progress("failing"):
        raise ValueError("boom")
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("stop", [asyncio.CancelledError, KeyboardInterrupt])
def test_a_progress_line_stopped_by_an_interrupt_says_stopped_and_names_no_error(monkeypatch, capsys, stop):
    monkeypatch.setitem(sys.modules, "ipykernel", sys.modules.get("ipykernel", types.ModuleType("ipykernel")))
    monkeypatch.setattr(_progress, "_in_kernel", lambda: True)  # a notebook's kernel under nbval: the final line
    monkeypatch.setenv(SCRIPTED_USER_ENV, "1")
    with pytest.raises(stop), progress("starting the servers"):
        raise stop
    with pytest.raises(ValueError), progress("failing"):
        raise ValueError("boom")
    stopped, failed = capsys.readouterr().out.splitlines()
    assert stopped.startswith("■ starting the servers") and stop.__name__ not in stopped, stopped
    assert failed == "✗ failing: ValueError"


@pytest.mark.anyio
async def test_a_form_as_the_sdk_callback_accepts_with_its_answer_and_declines_on_none():
    asked = ElicitRequestFormParams(message="Which space?", requested_schema={"type": "object", "properties": {}})
    accepted = await elicitation_callback(scripted_form({"space": "team"}))(None, asked)

    async def nobody_answers(message: str, schema: dict) -> None:
        return None

    declined = await elicitation_callback(nobody_answers)(None, asked)
    assert (accepted.action, accepted.content) == ("accept", {"space": "team"})
    assert (declined.action, declined.content) == ("decline", None)
