"""The person at the host: every call that needs approval is shown with its full arguments, and answered yes or no."""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..host import argument_hash, scripted_user_active
from ._scanner import POWER_NAME
from ..trace import Trace
from ._hidden import reveal

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ApprovalDesk", "ApprovalRequest", "Decider", "approve_all", "careful_user", "render_arguments"]

Decider = Callable[[str, str, dict[str, Any]], tuple[bool, str]]
"""(server, tool, arguments) → (approve?, why): a scripted person's rule."""
HOME_DOMAIN = "shop.example"
_ADDRESS = re.compile(r"[\w.+-]+@([\w-]+(?:\.[\w-]+)+)|https?://([\w.-]+)")
_PRIVATE_KEY = re.compile(r"PRIVATE KEY")


def _nobody_can_click() -> bool:
    """CI says so (`LABKIT_SCRIPTED_USER=1`), or the kernel runs under pytest (nbval), which has no frontend."""
    return scripted_user_active() or "PYTEST_CURRENT_TEST" in os.environ


def render_arguments(arguments: dict[str, Any]) -> str:
    """The arguments as they would be sent, indented, never shortened; hidden characters made visible (notebook 07)."""
    return reveal(json.dumps(arguments, indent=2, ensure_ascii=False))


def careful_user(server: str, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """The scripted person: reads the effective call (full tool name, arguments with the server's defaults);
    refuses a tool claiming powers over the host, a key, or an address outside shop.example (notebook 07)."""
    if match := POWER_NAME.search(tool):
        return False, f"the tool's name claims {match.group()!r}; nothing in this task needs that"
    text = json.dumps(arguments, ensure_ascii=False)
    if _PRIVATE_KEY.search(text):
        return False, "the arguments contain a private key"
    for match in _ADDRESS.finditer(text):
        domain = (match.group(1) or match.group(2)).lower()
        if domain != HOME_DOMAIN and not domain.endswith("." + HOME_DOMAIN):
            return False, f"it would send something to {domain}, outside {HOME_DOMAIN}"
    return True, "nothing in the arguments leaves the company"


def approve_all(server: str, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """"Always allow": the setting many hosts offer, and the one the attacks count on (notebook 07)."""
    return True, "always allow"


@dataclass(frozen=True)
class ApprovalRequest:
    """One question put to the person: the call, what they were shown, and their answer (notebook 07)."""

    server: str
    tool: str
    args_hash: str
    shown: str
    approved: bool
    reason: str
    by: str


class ApprovalDesk:
    """An `Approver` (for `GatePolicy`) that shows the full arguments and records every answer (notebook 07).

    With `widget=True` it shows an ipywidgets form with Approve and Refuse and waits for a click;
    under CI (`LABKIT_SCRIPTED_USER=1`, or a kernel run by nbval) or without a widget, `decide`
    answers and the record says so.
    """

    def __init__(self, trace: Trace, decide: Decider = careful_user, *, widget: bool = False,
                 timeout: float = 600.0) -> None:
        self.trace, self.decide, self.widget, self.timeout = trace, decide, widget, timeout
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, server: str, tool: str, arguments: dict[str, Any]) -> bool:
        shown = render_arguments(arguments)
        self.trace.record("host", "user", "host.approval", f"asks to approve {tool} on {server}, showing all "
                          f"{len(shown)} characters of its arguments", name=tool, payload={"arguments": shown})
        approved, reason = self.decide(server, tool, arguments)
        by = "scripted user"
        if self.widget:
            approved, reason, by = await self._ask_widget(server, tool, shown, approved, reason)
        self.requests.append(ApprovalRequest(server, tool, argument_hash(arguments), shown, approved, reason, by))
        verdict = "approved" if approved else "refused"
        self.trace.record("user", "host", "user.answer", f"{verdict} {tool}: {reason}", name=tool, outcome=verdict,
                          by=by)
        return approved

    def approved(self, server: str, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether the latest question about exactly this call was answered yes."""
        digest = argument_hash(arguments)
        same = [r for r in self.requests if (r.server, r.tool, r.args_hash) == (server, tool, digest)]
        return bool(same) and same[-1].approved

    def table(self) -> pd.DataFrame:
        """One row per question: server, tool, argument hash, characters shown, answer, reason, by whom."""
        import pandas as pd
        rows = [{"server": r.server, "tool": r.tool, "args_hash": r.args_hash, "shown_chars": len(r.shown),
                 "answer": "approved" if r.approved else "refused", "reason": r.reason, "by": r.by}
                for r in self.requests]
        return pd.DataFrame(rows, columns=["server", "tool", "args_hash", "shown_chars", "answer", "reason", "by"])

    async def _ask_widget(self, server: str, tool: str, shown: str, approved: bool,
                          reason: str) -> tuple[bool, str, str]:
        import ipywidgets as widgets
        from IPython.display import display

        approve = widgets.Button(description="Approve", button_style="success")
        refuse = widgets.Button(description="Refuse")
        status = widgets.Label(value="waiting for your answer")
        question = widgets.HTML(f"<b>Approve this call?</b> {html.escape(tool)} on {html.escape(server)}"
                                f"<pre>{html.escape(shown)}</pre>")
        display(widgets.VBox([question, widgets.HBox([approve, refuse]), status]))
        if _nobody_can_click():
            status.value = f"answered by the scripted user (CI): {'approved' if approved else 'refused'} ({reason})"
            return approved, reason, "scripted user"
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        approve.on_click(lambda _: answer.done() or answer.set_result(True))
        refuse.on_click(lambda _: answer.done() or answer.set_result(False))
        try:
            clicked = await asyncio.wait_for(answer, self.timeout)
        except TimeoutError:
            clicked = False
        for button in (approve, refuse):
            button.disabled = True
        status.value = "approved" if clicked else "refused"
        return clicked, "your click" if clicked or answer.done() else "no answer in time", "person"
