"""The person at the host: every call that needs approval is shown with its full arguments, and answered yes or no."""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from labkit._i18n import N_, _, clauses, listing

from ..host import Waited, WaitingForm, argument_hash, scripted_user_active
from ..trace import Kind, Outcome, Trace, headed
from ._flows import Flow, Provenance
from ._hidden import count_hidden, reveal
from ._scanner import POWER_NAME

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ApprovalDesk",
    "ApprovalRequest",
    "Concern",
    "Decider",
    "approve_all",
    "careful_flow",
    "careful_provenance",
    "careful_user",
    "concerns",
    "consequence",
    "render_arguments",
]

Decider = Callable[[str, str, dict[str, Any]], tuple[bool, str]]
"""(server, tool, arguments) → (approve?, why): a scripted person's rule."""
FlowDecider = Callable[[Flow], tuple[bool, str]]
"""A trusted→untrusted flow → (let it go?, why): a scripted person's rule for the flow question."""
ProvenanceDecider = Callable[[Provenance], tuple[bool, str]]
"""A trusted call carrying an untrusted server's value → (approve?, why): a scripted person's rule."""
HOME_DOMAIN = "shop.example"
_ADDRESS = re.compile(r"[\w.+-]+@([\w-]+(?:\.[\w-]+)+)|https?://([\w.-]+)")
_PRIVATE_KEY = re.compile(r"PRIVATE KEY")


def _nobody_can_click() -> bool:
    """CI says so (`LABKIT_SCRIPTED_USER=1`), or the kernel runs under pytest (nbval), which has no frontend."""
    return scripted_user_active() or "PYTEST_CURRENT_TEST" in os.environ


def render_arguments(arguments: dict[str, Any]) -> str:
    """The arguments as they would be sent, indented, never shortened; hidden characters made visible (notebook 07)."""
    return reveal(json.dumps(arguments, indent=2, ensure_ascii=False))


# The desk's table: its field names (what code indexes) and their headings in the learner's language.
_DESK_HEADINGS = {
    "server": N_("server"),
    "tool": N_("tool"),
    "args_hash": "args_hash",
    "shown_chars": "shown_chars",
    "answer": N_("answer"),
    "reason": N_("reason"),
    "by": N_("by"),
    "the yes allowed": N_("the yes allowed"),
}


@dataclass(frozen=True)
class Concern:
    """One thing in a call the careful user would not let through: why it is refused, and what a yes allows."""

    kind: str  # "power-name", "private-key", "outside-address" or "hidden-characters"
    refusal: str
    allowed: str


def concerns(tool: str, arguments: dict[str, Any]) -> list[Concern]:
    """What the careful user's rules find in the effective call: a tool claiming powers over the host, a key,
    an address outside shop.example, hidden characters (notebook 07)."""
    found = []
    if match := POWER_NAME.search(tool):
        found.append(
            Concern(
                "power-name",
                _("the tool's name claims {group!r}; nothing in this task needs that").format(group=match.group()),
                _("a tool whose name claims {group!r}").format(group=match.group()),
            )
        )
    # A person reads a full-width ＠ or a one-dot leader as @ and ., and so may the system that receives it: the
    # rules read the compatibility form (NFKC). Look-alike letters stay what they are, so ѕhop.example is outside.
    text = unicodedata.normalize("NFKC", json.dumps(arguments, ensure_ascii=False))
    if _PRIVATE_KEY.search(text):
        found.append(
            Concern("private-key", _("the arguments contain a private key"), _("a private key in the arguments"))
        )
    for match in _ADDRESS.finditer(text):
        domain = (match.group(1) or match.group(2)).lower()
        if domain != HOME_DOMAIN and not domain.endswith("." + HOME_DOMAIN):
            found.append(
                Concern(
                    "outside-address",
                    _("it would send something to {domain}, outside {HOME_DOMAIN}").format(
                        domain=domain, HOME_DOMAIN=HOME_DOMAIN
                    ),
                    _("sending to {group}, an address outside the user's domain {HOME_DOMAIN}").format(
                        group=match.group(), HOME_DOMAIN=HOME_DOMAIN
                    ),
                )
            )
    if hidden := count_hidden(text):
        found.append(
            Concern(
                "hidden-characters",
                _("the arguments hide {hidden} invisible character(s)").format(hidden=hidden),
                _("{hidden} hidden character(s) in the arguments").format(hidden=hidden),
            )
        )
    return found


def careful_user(server: str, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """The scripted person: reads the effective call (full tool name, arguments with the server's defaults) and
    refuses at the first of its `concerns` (notebook 07)."""
    if found := concerns(tool, arguments):
        return False, found[0].refusal
    return True, _("nothing in the arguments leaves the company")


def careful_flow(flow: Flow) -> tuple[bool, str]:
    """The scripted person asked about a flow: data a trusted server gave never goes to an untrusted one, whatever
    the call looks like (notebook 07)."""
    return False, _("data from {sources} would go to {target}, a server the host does not trust").format(
        sources=listing(flow.source_servers), target=flow.target
    )


def careful_provenance(steered: Provenance) -> tuple[bool, str]:
    """The scripted person told that an untrusted server chose a value of a trusted call: they did not choose it,
    so they refuse it, however ordinary the value looks (notebook 07)."""
    if not steered.argument:
        return False, _("{source} asked for this call, not me; a server the host does not trust picks no calls").format(
            source=steered.source_server
        )
    return False, _("{source} chose {argument!r}, not me; a server the host does not trust picks no values").format(
        source=steered.source_server, argument=steered.argument
    )


def consequence(tool: str, arguments: dict[str, Any]) -> str:
    """What a yes to this call allows, in one sentence, or "" when the careful user would see nothing wrong."""
    found = concerns(tool, arguments)
    return _("You approved {allowed}.").format(allowed=clauses(c.allowed for c in found)) if found else ""


def approve_all(server: str, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
    """ "Always allow": the setting many hosts offer, and the one the attacks count on (notebook 07)."""
    return True, _("always allow")


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
    consequence: str = ""
    """What the yes allowed that the careful user's rules would have refused ("" for a refusal or a clean call)."""


class ApprovalDesk:
    """An `Approver` (for `GatePolicy`) that shows the full arguments and records every answer (notebook 07).

    With `widget=True` it shows an ipywidgets form with Approve and Refuse and waits for a click;
    under CI (`LABKIT_SCRIPTED_USER=1`, or a kernel run by nbval) or without a widget, `decide`
    answers and the record says so.
    """

    def __init__(
        self,
        trace: Trace,
        decide: Decider = careful_user,
        *,
        decide_flow: FlowDecider = careful_flow,
        decide_provenance: ProvenanceDecider = careful_provenance,
        widget: bool = False,
        timeout: float = 600.0,
        trusted: Callable[[str], bool] | None = None,
    ) -> None:
        self.trace, self.decide, self.decide_flow, self.widget, self.timeout = (
            trace,
            decide,
            decide_flow,
            widget,
            timeout,
        )
        self.decide_provenance = decide_provenance
        self.trusted = trusted
        """Whether the host trusts a server (the shield sets it): every question says so."""
        self.requests: list[ApprovalRequest] = []

    def _who(self, server: str) -> str:
        if self.trusted is None:
            return server
        return (
            _("{server}, a server the host trusts")
            if self.trusted(server)
            else _("{server}, a server the host does NOT trust")
        ).format(server=server)

    async def __call__(self, server: str, tool: str, arguments: dict[str, Any]) -> bool:
        shown = render_arguments(arguments)
        self.trace.record(
            "host",
            "user",
            Kind.HOST_APPROVAL,
            _("asks to approve {tool} on {server}, showing all {n_shown} characters of its arguments").format(
                tool=tool, server=self._who(server), n_shown=len(shown)
            ),
            name=tool,
            server=server,
            payload={"arguments": shown},
        )
        approved, reason = self.decide(server, tool, arguments)
        if_yes = consequence(tool, arguments)
        question = _("<b>Approve this call?</b> {tool} on {server}<pre>{arguments}</pre>").format(
            tool=html.escape(tool), server=html.escape(self._who(server)), arguments=html.escape(shown)
        )
        return await self._answered(
            ApprovalRequest(server, tool, argument_hash(arguments), shown, approved, reason, "scripted user", if_yes),
            question,
        )

    async def ask_flow(self, flow: Flow) -> bool:
        """A `FlowAsker`: the flow as its own question, naming both servers and the data, never folded into a
        call's approval (notebook 07)."""
        shown = flow.question
        self.trace.record(
            "host",
            "user",
            Kind.HOST_APPROVAL,
            _("asks whether data from {sources} may go to {target}").format(
                sources=listing(flow.sources), target=self._who(flow.target)
            ),
            name=flow.tool,
            server=flow.target,
            flow=True,
            payload={"question": shown, "sources": list(flow.sources), "target": flow.target},
        )
        approved, reason = self.decide_flow(flow)
        question = _("<b>Let data leave a server the host trusts?</b><pre>{question}</pre>").format(
            question=html.escape(shown)
        )
        if_yes = _("data from {sources} sent to {target}").format(sources=listing(flow.sources), target=flow.target)
        request = ApprovalRequest(
            flow.target, flow.tool, argument_hash({"flow": shown}), shown, approved, reason, "scripted user", if_yes
        )
        return await self._answered(request, question)

    async def ask_provenance(self, steered: Provenance) -> bool:
        """A `ProvenanceAsker`: a trusted call whose value an untrusted server chose, asked with where that value
        came from, naming the untrusted server and the argument (notebook 07)."""
        shown = steered.question
        self.trace.record(
            "host",
            "user",
            Kind.HOST_APPROVAL,
            _("asks to approve {tool} on {server}, whose {argument!r} came from {source}").format(
                tool=steered.tool, server=self._who(steered.target), argument=steered.chosen, source=steered.source
            ),
            name=steered.tool,
            server=steered.target,
            provenance=steered.source,
            payload={"question": shown, "source": steered.source, "argument": steered.argument},
        )
        approved, reason = self.decide_provenance(steered)
        question = _("<b>Approve a value another server chose?</b><pre>{question}</pre>").format(
            question=html.escape(shown)
        )
        if_yes = _("{tool} on {target} with {argument!r} chosen by {source}").format(
            tool=steered.tool, target=steered.target, argument=steered.chosen, source=steered.source
        )
        request = ApprovalRequest(
            steered.target,
            steered.tool,
            argument_hash({"provenance": shown}),
            shown,
            approved,
            reason,
            "scripted user",
            if_yes,
        )
        return await self._answered(request, question)

    async def _answered(self, request: ApprovalRequest, question: str) -> bool:
        """The scripted answer in `request`, or the person's click when a widget is shown; recorded either way."""
        approved, reason, by = request.approved, request.reason, request.by
        if self.widget:
            approved, reason, by = await self._ask_widget(question, approved, reason, request.consequence)
        tool = request.tool
        allowed = request.consequence if approved else ""
        self.requests.append(replace(request, approved=approved, reason=reason, by=by, consequence=allowed))
        verdict = Outcome.APPROVED if approved else Outcome.REFUSED
        self.trace.record(
            "user",
            "host",
            Kind.USER_ANSWER,
            (_("approved {tool}: {reason}") if approved else _("refused {tool}: {reason}")).format(
                tool=tool, reason=reason
            ),
            name=tool,
            outcome=verdict,
            by=by,
            consequence=allowed,
        )
        return approved

    def approved(self, server: str, tool: str, arguments: dict[str, Any]) -> bool:
        """Whether the latest question about exactly this call was answered yes."""
        digest = argument_hash(arguments)
        same = [r for r in self.requests if (r.server, r.tool, r.args_hash) == (server, tool, digest)]
        return bool(same) and same[-1].approved

    def table(self) -> pd.DataFrame:
        """One row per question: server, tool, argument hash, characters shown, answer, reason, by whom, and what
        a yes allowed that the careful user would have refused."""
        rows = [
            {
                "server": r.server,
                "tool": r.tool,
                "args_hash": r.args_hash,
                "shown_chars": len(r.shown),
                "answer": "approved" if r.approved else "refused",
                "reason": r.reason,
                "by": r.by,
                "the yes allowed": r.consequence,
            }
            for r in self.requests
        ]
        return headed(rows, _DESK_HEADINGS).reindex(columns=list(_DESK_HEADINGS))

    async def _ask_widget(self, asked: str, approved: bool, reason: str, if_yes: str) -> tuple[bool, str, str]:
        import ipywidgets as widgets

        approve = widgets.Button(description=_("Approve"), button_style="success")
        refuse = widgets.Button(description=_("Refuse"))
        status = widgets.HTML(value=_("◷ waiting for your answer"))
        question = widgets.HTML(asked)
        # The form's subject in a saved notebook: the question without its details (the call's arguments).
        subject = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", asked.split("<pre>")[0])).split())
        form = WaitingForm(
            widgets.VBox([question, widgets.HBox([approve, refuse]), status]),
            status,
            (approve, refuse),
            subject=subject,
        )
        if _nobody_can_click():
            line = _("answered by the scripted user (CI): {answer} ({reason})").format(
                answer=_("approved") if approved else _("refused"), reason=reason
            )
            form.close(html.escape(f"{line} {if_yes}" if approved and if_yes else line))
            form.show(live=False)
            return approved, reason, "scripted user"
        form.show(live=True)
        answer: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        approve.on_click(lambda _button: None if answer.done() else answer.set_result(True))
        refuse.on_click(lambda _button: None if answer.done() else answer.set_result(False))
        waited = await form.wait(answer, self.timeout)
        clicked = waited is Waited.ANSWERED and answer.result()
        form.close(html.escape((if_yes or _("approved")) if clicked else _("refused")))
        why = {
            Waited.ANSWERED: _("your click"),
            Waited.TIMED_OUT: _("no answer in time"),
            Waited.RUN_AGAIN: _("its cell was run again while it waited"),
        }[waited]
        return clicked, why, "person"
