"""The user's side of the host: the widget form, and scripted users when nobody is at the keyboard."""

from __future__ import annotations

import asyncio
import html
import os
from collections.abc import Awaitable, Callable
from typing import Any

from mcp_types import ElicitResult

from labkit._i18n import _, clauses, listing

from ._connector import FORM_ABOUT, Elicitor
from ._host import Asker
from ._rerun import Waited, replaces_declined_form
from ._waiting import WaitingForm

__all__ = [
    "SCRIPTED_USER_ENV",
    "elicitation_callback",
    "scripted_answers",
    "scripted_form",
    "scripted_user_active",
    "widget_form",
]

SCRIPTED_USER_ENV = "LABKIT_SCRIPTED_USER"


def scripted_user_active() -> bool:
    """True under CI and nbval, where nobody can click: forms are then answered by a script (notebook 03)."""
    return os.environ.get(SCRIPTED_USER_ENV, "") not in ("", "0")


def answer_problems(schema: dict[str, Any], answer: dict[str, Any]) -> list[str]:
    """Why `answer` does not fit `schema` (a required field left empty, a value outside its enum); [] when it fits."""
    problems = []
    for name, spec in (schema.get("properties") or {}).items():
        label, value = spec.get("title") or name, answer.get(name)
        if value in (None, "") and name in schema.get("required", ()):
            choices = (
                _(": pick one of {values}").format(values=listing(map(str, spec["enum"]))) if "enum" in spec else ""
            )
            problems.append(_("{label} is required{choices}").format(label=label, choices=choices))
        elif "enum" in spec and value is not None and value not in spec["enum"]:
            problems.append(
                _("{label} must be one of {values}, not {value!r}").format(
                    label=label, values=listing(map(str, spec["enum"])), value=value
                )
            )
    return problems


def elicitation_callback(form: Elicitor) -> Callable[[Any, Any], Awaitable[ElicitResult]]:
    """`form` as the SDK's `Client(elicitation_callback=...)` (notebook 04): a dict answer accepts, None declines.

    Passing it is also what makes the client declare form elicitation in every request's `_meta`; a
    2026-07-28 server that must ask a client without it answers -32021.
    """

    async def answer(context: Any, params: Any) -> ElicitResult:
        content = await form(params.message, getattr(params, "requested_schema", {}))
        return ElicitResult(action="decline") if content is None else ElicitResult(action="accept", content=content)

    return answer


def widget_form(scripted: dict[str, Any], *, timeout: float = 600.0) -> Elicitor:
    """An elicitor that shows the server's question as a form and waits for Submit (notebook 04).

    The form scrolls itself into view and says which call asked and why. Enums become radio
    buttons, booleans a checkbox, numbers and strings text boxes, preset to the schema's default.
    Submit is refused, with the reason, until the answer fits the schema. Decline, no answer
    within `timeout` seconds, or running the form's cell again (Run All twice) declines. Where nobody can click
    (`LABKIT_SCRIPTED_USER=1`, set by CI), `scripted` is filled in and submitted, and the form says so.
    """

    async def ask(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        import ipywidgets as widgets

        about = FORM_ABOUT.get()
        fields = {name: _field(name, spec) for name, spec in (schema.get("properties") or {}).items()}
        submit = widgets.Button(description=_("Submit"), button_style="primary")
        decline = widgets.Button(description=_("Decline"))
        # ◷ and ►, not emoji: text fonts draw them; a browser with no emoji font shows an emoji as a box.
        status = widgets.HTML(
            value=_("◷ waiting for your answer (declines by itself after {timeout:.0f} s)").format(timeout=timeout)
        )
        title = _("► Your answer is needed: {message}").format(message=html.escape(message))
        why = _("<br><small>asked by {about}</small>").format(about=html.escape(about)) if about else ""
        if not scripted_user_active() and replaces_declined_form():
            why += _(
                "<br><small>↻ this is the new run's form: the earlier one was declined when you ran the cells "
                "again</small>"
            )
        form = widgets.VBox(
            [widgets.HTML(f"<b>{title}</b>{why}"), *fields.values(), widgets.HBox([submit, decline]), status]
        )
        shown = WaitingForm(form, status, (*fields.values(), submit, decline), subject=message)
        if scripted_user_active():
            for name, value in scripted.items():
                fields[name].value = value
            # Closed before it is shown: the output carries the answer from its first display (nbval compares that).
            shown.close(_("answered by the scripted user (CI): {scripted}").format(scripted=scripted))
            shown.show(live=False)
            return dict(scripted)
        shown.show(live=True)
        answer: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()

        def on_submit(_button: Any) -> None:
            given = {n: f.value for n, f in fields.items() if f.value is not None}
            problems = answer_problems(schema, given)
            if problems:
                status.value = _("⚠ not sent: {problems}").format(problems=html.escape(clauses(problems)))
            elif not answer.done():
                answer.set_result(given)

        submit.on_click(on_submit)
        decline.on_click(lambda _button: None if answer.done() else answer.set_result(None))
        # No "never drawn" cut-off: JupyterLab draws a cell's output only when it scrolls near it.
        waited = await shown.wait(answer, timeout)
        result = answer.result() if waited is Waited.ANSWERED else None
        line = (
            _("submitted: {answer}").format(answer=html.escape(str(result)))
            if result is not None
            else (
                _(
                    "declined: nothing was sent to the server as an answer, "
                    "so the server will not do what it asked about"
                )
            )
        )
        if waited is Waited.RUN_AGAIN:
            line += _(" (you ran this cell again while the form waited)")
        shown.close(line)
        return result

    return ask


def _field(name: str, spec: dict[str, Any]) -> Any:
    import ipywidgets as widgets

    label = spec.get("title") or name
    if "enum" in spec:
        return widgets.RadioButtons(options=list(spec["enum"]), description=label, value=spec.get("default"))
    if spec.get("type") == "boolean":
        return widgets.Checkbox(description=label, value=bool(spec.get("default", False)))
    if spec.get("type") in ("integer", "number"):
        return widgets.FloatText(description=label, value=spec.get("default", 0))
    return widgets.Text(description=label, value=spec.get("default", ""), placeholder=spec.get("description", ""))


def scripted_form(answers: dict[str, Any], *, say: bool = False) -> Elicitor:
    """A form-filler that always submits `answers` (CI's stand-in for the widget form) (notebook 04)."""

    async def fill(message: str, schema: dict[str, Any]) -> dict[str, Any]:
        if say:
            print(_("[scripted user] {message!r} -> {answers}").format(message=message, answers=answers))  # noqa: T201 - the scripted user says what it answered
        return dict(answers)

    return fill


def scripted_answers(*replies: str) -> Asker:
    """Replies to the model's questions in order, the last one repeated (notebook 06)."""
    queue: list[str] = list(replies)

    async def reply(question: str) -> str:
        return queue.pop(0) if len(queue) > 1 else queue[0]

    return reply
