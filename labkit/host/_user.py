"""The user's side of the host: the widget form, and scripted users when nobody is at the keyboard."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from ._host import Asker, Elicitor

__all__ = ["SCRIPTED_USER_ENV", "scripted_answers", "scripted_form", "scripted_user_active", "widget_form"]

SCRIPTED_USER_ENV = "LABKIT_SCRIPTED_USER"


def scripted_user_active() -> bool:
    """True under CI and nbval, where nobody can click: forms are then answered by a script (notebook 03)."""
    return os.environ.get(SCRIPTED_USER_ENV, "") not in ("", "0")


def widget_form(scripted: dict[str, Any], *, timeout: float = 600.0) -> Elicitor:
    """An elicitor that shows the server's question as a form and waits for Submit (notebook 04).

    Enums become radio buttons, booleans a checkbox, numbers and strings text boxes. Where nobody
    can click (`LABKIT_SCRIPTED_USER=1`, set by CI), `scripted` is filled in and submitted, and
    the form says so. Decline, or no answer within `timeout` seconds, declines.
    """

    async def ask(message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        import ipywidgets as widgets
        from IPython.display import display

        fields = {name: _field(name, spec) for name, spec in (schema.get("properties") or {}).items()}
        submit = widgets.Button(description="Submit", button_style="primary")
        decline = widgets.Button(description="Decline")
        status = widgets.Label(value="waiting for your answer")
        form = widgets.VBox([widgets.HTML(f"<b>{message}</b>"), *fields.values(), widgets.HBox([submit, decline]), status])
        display(form)
        if scripted_user_active():
            for name, value in scripted.items():
                fields[name].value = value
            status.value = f"answered by the scripted user (CI): {scripted}"
            return dict(scripted)
        answer: asyncio.Future[dict[str, Any] | None] = asyncio.get_running_loop().create_future()
        submit.on_click(lambda _: answer.done() or answer.set_result({n: f.value for n, f in fields.items()}))
        decline.on_click(lambda _: answer.done() or answer.set_result(None))
        try:
            result = await asyncio.wait_for(answer, timeout)
        except asyncio.TimeoutError:
            result = None
        status.value = f"submitted: {result}" if result is not None else "declined"
        for control in (*fields.values(), submit, decline):
            control.disabled = True
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

