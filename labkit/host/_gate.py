"""The host's gate: what a proposed tool call must pass before any client sends it."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from mcp_types import Tool

if TYPE_CHECKING:
    import jsonschema

__all__ = ["Approver", "GateDecision", "GatePolicy", "check_call", "deny_all", "needs_approval"]

Approver = Callable[[str, str, dict[str, Any]], Awaitable[bool]]
"""Asked with (server, tool, full arguments) for calls that change something; answers yes or no."""

_MODEL_WRITTEN_APPROVALS = ("approved", "approval", "confirmed", "user_approved", "human_approved")


async def deny_all(server: str, tool: str, arguments: dict[str, Any]) -> bool:
    """The default approver: nobody is there to say yes, so nothing that writes is sent (notebook 03)."""
    return False


@dataclass(frozen=True)
class GatePolicy:
    """What the host allows: a tool allow-list (None: every listed tool) and who approves writes (notebook 03).

    `auto_approve` names tools the host's policy approves without asking; `approve_all` approves every
    call that way (notebook 07's "defences off"), and the gate says it was the policy, not a person.
    """

    allowed_tools: frozenset[str] | None = None
    approver: Approver = deny_all
    auto_approve: frozenset[str] = frozenset()
    approve_all: bool = False


@dataclass(frozen=True)
class GateDecision:
    """The gate's verdict on one call, with every reason it gave (notebook 03)."""

    allowed: bool
    reasons: tuple[str, ...] = ()
    approval: str = "not needed"
    ignored_fields: tuple[str, ...] = field(default=())

    @property
    def summary(self) -> str:
        verdict = "allowed" if self.allowed else "blocked"
        return f"{verdict}: {'; '.join(self.reasons)}"


def needs_approval(tool: Tool | None) -> bool:
    """A call needs a person's yes unless the tool says it only reads (a hint, checked by a person) (notebook 03)."""
    annotations = tool.annotations if tool is not None else None
    return not (annotations is not None and annotations.read_only_hint is True)


async def check_call(
    server: str, tool: Tool | None, name: str, arguments: dict[str, Any], policy: GatePolicy
) -> GateDecision:
    """Allow-list, schema, then approval: the model's proposal is checked, never trusted (notebook 03).

    Fields in which the model claims approval (`approved: true` and the like) are noted and ignored.
    """
    reasons: list[str] = []
    if policy.allowed_tools is not None and name not in policy.allowed_tools:
        return GateDecision(False, (f"{name} is not on the host's allow-list",))
    if tool is not None:
        problems = _schema_problems(tool.input_schema, arguments)
        if problems:
            return GateDecision(False, tuple(f"arguments do not match the schema: {p}" for p in problems))
        reasons.append("arguments match the schema")
    else:
        reasons.append(f"{name} is not in the host's tool list; the server will judge it")
    declared = (tool.input_schema.get("properties") or {}) if tool is not None else {}
    ignored = tuple(k for k in _MODEL_WRITTEN_APPROVALS if k in arguments and k not in declared)
    if ignored:
        reasons.append(f"ignored approval written by the model: {', '.join(ignored)}")
    if tool is None or not needs_approval(tool):
        reasons.append("read-only, no approval needed")
        return GateDecision(True, tuple(reasons), ignored_fields=ignored)
    if policy.approve_all or name in policy.auto_approve:
        reasons.append("approved by the host's policy")
        return GateDecision(True, tuple(reasons), "policy", ignored)
    approved = await policy.approver(server, name, arguments)
    reasons.append("approved by the user" if approved else "the user did not approve")
    return GateDecision(approved, tuple(reasons), "user" if approved else "refused", ignored)


@cache
def import_validator_in_background() -> None:
    """Start importing jsonschema on a thread, once, while a server starts.

    The gate's first check and the SDK's first structured result need it, and its import takes seconds
    that a server's start otherwise spends waiting.
    """
    importer = threading.Thread(target=importlib.import_module, args=("jsonschema",), name="import-jsonschema")
    importer.daemon = True
    importer.start()


def _schema_problems(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    # Imported on the first check, not with the host: jsonschema's format module builds a grammar at import.
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    return [_describe(error) for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))]


def _describe(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.path)
    return f"{where}: {error.message}" if where else error.message

