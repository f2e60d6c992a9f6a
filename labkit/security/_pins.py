"""Pinning: a hash of each tool's definition, prompt and resource, kept on disk; a change waits for a person."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp_types import Tool

from labkit._i18n import _, clauses, listing

from ..host import Guard, wire_tool
from ..trace import Kind, Outcome, Trace

__all__ = [
    "INSTRUCTIONS",
    "PIN_FIELDS",
    "PinApprover",
    "PinChange",
    "PinGuard",
    "PinStore",
    "canonical",
    "fingerprint",
    "trust_on_first_use",
]

PIN_FIELDS = ("name", "description", "inputSchema", "outputSchema", "annotations")
"""What a pin covers. Not `_meta`: servers may change it on every launch without changing the tool."""
INSTRUCTIONS = "(server instructions)"


def canonical(tool: Tool | Mapping[str, Any], fields: Sequence[str] = PIN_FIELDS) -> dict[str, Any]:
    """The pinned part of a definition, as the JSON the wire carries (notebook 07)."""
    wire = wire_tool(tool)
    return {field: wire.get(field) for field in fields}


def fingerprint(tool: Tool | Mapping[str, Any], fields: Sequence[str] = PIN_FIELDS) -> str:
    """SHA-256 of the canonical JSON (sorted keys, fixed separators): key order is no change (notebook 07)."""
    text = json.dumps(canonical(tool, fields), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class PinChange:
    """A tool the pin store has not seen (`new`) or whose definition differs from its pin (`changed`) (notebook 07)."""

    server: str
    tool: str
    kind: str
    fields: tuple[str, ...]
    old: dict[str, Any] | None
    new: dict[str, Any]

    @property
    def summary(self) -> str:
        """The change in the learner's language; the tool and field names stay as they are."""
        tool = _("(server instructions)") if self.tool == INSTRUCTIONS else self.tool
        if self.kind == "new":
            return _("{tool}: new").format(tool=tool)
        return _("{tool}: {fields} changed").format(tool=tool, fields=listing(self.fields))


PinApprover = Callable[[str, list[PinChange]], Awaitable[bool]]
"""Asked with (server, changes) once per listing that has changes; yes pins them, no withholds them."""


async def trust_on_first_use(server: str, changes: list[PinChange]) -> bool:
    """The scripted reviewer: approves a server's tools the first time, refuses any later change (notebook 07)."""
    return all(change.kind == "new" for change in changes)


class PinStore:
    """`{server: {tool: {"sha256": ..., "definition": ...}}}` in one JSON file; it survives restarts (notebook 07)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.pins: dict[str, dict[str, dict[str, Any]]] = (
            json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else {}
        )

    def get(self, server: str, tool: str) -> dict[str, Any] | None:
        return self.pins.get(server, {}).get(tool)

    def put(self, server: str, tool: str, definition: dict[str, Any], digest: str) -> None:
        self.pins.setdefault(server, {})[tool] = {"sha256": digest, "definition": definition}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.pins, indent=1, ensure_ascii=False, sort_keys=True), encoding="utf-8")

    def __len__(self) -> int:
        return sum(len(tools) for tools in self.pins.values())


class PinGuard(Guard):
    """Compares each listed tool (and the server's instructions) with its pin; new or changed ones wait (notebook 07).

    Prompts and untrusted servers' resources are pinned too, when the user first loads them (`on_content`).

    Approved definitions are pinned; refused ones are withheld from the model and asked about
    again on the next listing, until a person approves them. Unchanged tools pass silently.
    """

    def __init__(
        self,
        trace: Trace,
        store: PinStore,
        approve: PinApprover,
        withheld: dict[tuple[str, str], str],
        *,
        instructions: Callable[[str], str | None] = lambda server: None,
        trusted: Callable[[str], bool] = lambda server: False,
        fields: Sequence[str] = PIN_FIELDS,
    ) -> None:
        self.trace, self.store, self.approve, self.withheld = trace, store, approve, withheld
        self.instructions, self.trusted, self.fields = instructions, trusted, tuple(fields)
        self.prompts: list[tuple[str, list[PinChange]]] = []

    def _change(
        self, server: str, name: str, definition: dict[str, Any], fields: Sequence[str] | None = None
    ) -> tuple[PinChange | None, str]:
        if fields is None:
            fields = ("instructions",) if name == INSTRUCTIONS else self.fields
        digest = fingerprint(definition, fields)
        pinned = self.store.get(server, name)
        if pinned is not None and pinned["sha256"] == digest:
            return None, digest
        old = pinned["definition"] if pinned else None
        changed = tuple(f for f in definition if old is None or old.get(f) != definition[f])
        return PinChange(server, name, "changed" if old else "new", changed, old, definition), digest

    async def on_list(self, server: str, tools: list[Tool]) -> list[Tool]:
        entries = {tool.name: canonical(tool, self.fields) for tool in tools}
        entries[INSTRUCTIONS] = {"instructions": self.instructions(server)}
        checked = {name: self._change(server, name, definition) for name, definition in entries.items()}
        changes = [change for change, _ in checked.values() if change is not None]
        if not changes:
            self.trace.record(
                "host",
                "host",
                Kind.HOST_PIN,
                _("pins: {server}'s {n_tools} tool(s) unchanged").format(server=server, n_tools=len(tools)),
                server=server,
                outcome=Outcome.ALLOWED,
                by=self.name,
            )
            return tools
        approved = await self._ask(server, changes)
        if approved:
            for change in changes:
                self.store.put(server, change.tool, change.new, checked[change.tool][1])
            return tools
        refused = {change.tool for change in changes}
        if INSTRUCTIONS in refused:
            refused |= set(entries)
        for name in refused - {INSTRUCTIONS}:
            self.withheld[(server, name)] = _("its definition is not approved (pinning)")
        self.trace.record(
            "host",
            "host",
            Kind.HOST_PIN,
            _("pins withheld from {server}: ").format(server=server)
            + listing(sorted(refused - {INSTRUCTIONS}))
            + _(" (until a person approves)"),
            server=server,
            outcome=Outcome.WITHHELD,
            by=self.name,
        )
        return [tool for tool in tools if tool.name not in refused]

    async def _ask(self, server: str, changes: list[PinChange]) -> bool:
        """The changes put to the person, question and answer recorded."""
        self.prompts.append((server, changes))
        changed = any(c.kind == "changed" for c in changes)  # a definition differs from what a person approved
        self.trace.record(
            "host",
            "user",
            Kind.HOST_PIN,
            _("asks to approve {server}: ").format(server=server) + clauses(c.summary for c in changes),
            payload=[c.__dict__ for c in changes],
            server=server,
            changed=changed,
        )
        approved = await self.approve(server, changes)
        verdict = Outcome.APPROVED if approved else Outcome.REFUSED
        answer = _("approved {server}: {changes}") if approved else _("refused {server}: {changes}")
        said = answer.format(server=server, changes=clauses(c.summary for c in changes))
        self.trace.record(
            "user", "host", Kind.USER_ANSWER, said, server=server, outcome=verdict, by="user", changed=changed
        )
        return approved

    async def on_content(self, server: str, kind: str, name: str, text: str, arguments: dict[str, str]) -> str | None:
        """A prompt (as a template: the arguments' values put back as their names) or an untrusted server's
        resource is pinned at its first use; a later change waits for a person like a changed tool."""
        if kind == "resource" and self.trusted(server):
            return None  # a trusted server's resource is the user's own data, and data changes
        for argument, value in sorted(arguments.items(), key=lambda item: -len(item[1])):
            if value:
                text = text.replace(value, "{" + argument + "}")
        key = f"{kind}:{name}"  # a tool's name cannot hold ':', so content pins never meet tool pins
        change, digest = self._change(server, key, {"text": text}, ("text",))
        if change is None:
            return None
        if await self._ask(server, [change]):
            self.store.put(server, key, change.new, digest)
            return None
        return (
            _("it changed since a person approved it (pinning)")
            if change.kind == "changed"
            else _("it is not approved (pinning)")
        )

    def on_instructions(self, server: str, text: str) -> str:
        """Instructions reach the system prompt only as a person approved (pinned) them."""
        change = self._change(server, INSTRUCTIONS, {"instructions": self.instructions(server)})[0]
        return text if change is None else ""
