"""The host's gate: what a proposed tool call must pass before any client sends it, and in which order."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcp_types import Tool

from labkit._i18n import _, clauses, listing

from ..trace import Outcome
from ._guards import Guard
from ._schema_refs import outside_references, schema_problems

__all__ = [
    "Approver",
    "GateDecision",
    "GatePolicy",
    "check_call",
    "deny_all",
    "effective_arguments",
    "needs_approval",
]

Approver = Callable[[str, str, dict[str, Any]], Awaitable[bool]]
"""Asked with (server, full tool name, effective arguments) for calls the checks passed; answers yes or no."""

_MODEL_WRITTEN_APPROVALS = ("approved", "approval", "confirmed", "user_approved", "human_approved")


async def deny_all(server: str, tool: str, arguments: dict[str, Any]) -> bool:
    """The default approver: nobody is there to say yes, so nothing that writes is sent (notebook 03)."""
    return False


@dataclass(frozen=True)
class GatePolicy:
    """What the host allows: a tool allow-list (None: every listed tool) and who approves writes (notebook 03).

    `auto_approve` names tools the host's policy approves without asking; `approve_all` approves every
    call that way (notebook 07's "defences off"), and the gate says it was the policy, not a person.
    Neither covers a call a guard asked a person to review: that one always goes to `approver`.
    """

    allowed_tools: frozenset[str] | None = None
    approver: Approver = deny_all
    auto_approve: frozenset[str] = frozenset()
    approve_all: bool = False


@dataclass(frozen=True)
class GateDecision:
    """The gate's verdict on one call, with every reason it gave and who decided (notebook 03).

    `outcome` is "allowed", "blocked" (an automatic check) or "denied" (a person said no); `by` names
    the check, the guard, "policy", "user" or "read-only".
    """

    allowed: bool
    reasons: tuple[str, ...] = ()
    approval: str = "not needed"
    ignored_fields: tuple[str, ...] = field(default=())
    by: str = "gate"

    @property
    def outcome(self) -> Outcome:
        return Outcome.ALLOWED if self.allowed else Outcome.DENIED if self.approval == "refused" else Outcome.BLOCKED

    @property
    def summary(self) -> str:
        reasons = clauses(self.reasons)
        return (_("allowed: {reasons}") if self.allowed else _("blocked: {reasons}")).format(reasons=reasons)


def needs_approval(tool: Tool) -> bool:
    """A call needs a person's yes unless the tool says it only reads (a hint, checked by a person) (notebook 03)."""
    return not (tool.annotations is not None and tool.annotations.read_only_hint is True)


def effective_arguments(tool: Tool, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments the server will act on: the model's, plus the schema's defaults it left out (notebook 07)."""
    defaults = {
        k: p["default"]
        for k, p in (tool.input_schema.get("properties") or {}).items()
        if isinstance(p, dict) and "default" in p and k not in arguments
    }
    return {**arguments, **defaults}


async def check_call(
    server: str,
    tool: Tool,
    name: str,
    arguments: dict[str, Any],
    policy: GatePolicy,
    guards: Sequence[Guard] = (),
) -> GateDecision:
    """Allow-list, schema, every guard, then approval: a person is asked only about calls that passed (notebook 03).

    Fields in which the model claims approval (`approved: true` and the like) are noted and ignored.
    A guard may block the call, or ask that a person approve it even when the tool says it only reads.
    """
    if policy.allowed_tools is not None and name not in policy.allowed_tools:
        return GateDecision(False, (_("{name} is not on the host's allow-list").format(name=name),), by="allow-list")
    # Schemas are data: a result checked against an output schema naming an outside document would fail, so fail now.
    problems = schema_problems(tool.input_schema, arguments) + [
        _("the output schema refers outside itself ({where}: {what}); the host fetches nothing a server names").format(
            where=where, what=what
        )
        for where, what in outside_references(tool.output_schema or {})
    ]
    if problems:
        return GateDecision(
            False,
            tuple(_("arguments do not match the schema: {problem}").format(problem=p) for p in problems),
            by="schema",
        )
    reasons = [_("arguments match the schema")]
    declared = tool.input_schema.get("properties") or {}
    ignored = tuple(k for k in _MODEL_WRITTEN_APPROVALS if k in arguments and k not in declared)
    if ignored:
        reasons.append(_("ignored approval written by the model: {ignored}").format(ignored=listing(ignored)))
    review: list[str] = []
    for guard in guards:
        blocked = await guard.on_call(server, tool, name, arguments)
        if blocked:
            return GateDecision(False, (*reasons, blocked), ignored_fields=ignored, by=guard.name)
        wanted = await guard.review(server, tool, name, arguments)
        if wanted:
            review.append(wanted)
    if not review and not needs_approval(tool):
        reasons.append(_("read-only, no approval needed"))
        return GateDecision(True, tuple(reasons), ignored_fields=ignored, by="read-only")
    reasons.extend(review)
    # The policy may approve what a tool's own kind needs; what a guard wants reviewed goes to the person.
    if not review and (policy.approve_all or name in policy.auto_approve):
        reasons.append(_("approved by the host's policy"))
        return GateDecision(True, tuple(reasons), "policy", ignored, by="policy")
    approved = await policy.approver(server, name, effective_arguments(tool, arguments))
    reasons.append(_("approved by the user") if approved else _("the user did not approve"))
    return GateDecision(approved, tuple(reasons), "user" if approved else "refused", ignored, by="user")
