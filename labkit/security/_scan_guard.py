"""The scanner as a host guard: a flagged tool is withheld, a flagged server's instructions kept out (notebook 07)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from mcp_types import Tool

from labkit._i18n import _, listing

from ..host import Guard
from ..trace import Kind, Outcome, Trace
from ._scanner import RULES, Rule, scan_text, scan_tool

__all__ = ["ScanGuard"]


class ScanGuard(Guard):
    """Withholds every tool the scanner flags, and every tool of a server whose instructions it flags (notebook 07).

    A finding of severity "review" (a name claiming powers over the host, a description written to
    win the model's choice) does not withhold the tool: a person is asked about every call to it.
    It remembers the names each server listed, so a later untrusted server cannot reuse (shadow)
    them; the shield lists trusted servers first. A namespacing host (`namespaced=True`) offers every tool
    as `<server>__<tool>`: there only a name that collides after namespacing shadows. `instructions(server)`
    returns the server's instructions; flagged ones are kept out of the system prompt (`on_instructions`).
    """

    def __init__(
        self,
        trace: Trace,
        withheld: dict[tuple[str, str], str],
        *,
        instructions: Callable[[str], str | None] = lambda server: None,
        trusted: Callable[[str], bool] = lambda server: False,
        rules: Sequence[Rule] = RULES,
        namespaced: bool = False,
    ) -> None:
        self.trace, self.withheld, self.instructions, self.rules = trace, withheld, instructions, rules
        self.namespaced = namespaced
        """The host offers `<server>__<tool>`: the same name on two servers is two tools, not a shadow."""
        self.trusted = trusted
        self.names: dict[str, dict[str, str]] = {}
        self.reviewed: dict[tuple[str, str], str] = {}

    async def on_list(self, server: str, tools: list[Tool]) -> list[Tool]:
        # A trusted server keeps its names even if an untrusted one listed them first.
        others = (
            {}
            if self.trusted(server)
            else {name: owner for owner, names in self.names.items() if owner != server for name in names}
        )
        self.names[server] = {tool.name: server for tool in tools}
        told = scan_text(self.instructions(server) or "", "instructions", self.rules)
        kept = []
        for tool in tools:
            found = told + scan_tool(
                tool,
                others=others,
                rules=self.rules,
                server=server if self.namespaced else None,
                own=self.names[server],
            )
            review = sorted({f.rule for f in found if f.severity == "review"})
            if review:
                self.reviewed[(server, tool.name)] = _("the scanner asks a person to review it ({review})").format(
                    review=listing(review)
                )
            findings = [f for f in found if f.severity == "block"]
            if not findings:
                kept.append(tool)
                continue
            rules = sorted({f.rule for f in findings})
            self.withheld[(server, tool.name)] = _("the scanner flagged it ({rules})").format(rules=listing(rules))
            self.trace.record(
                "host",
                "host",
                Kind.HOST_SCAN,
                _("scanner withheld {server}/{name}: {rules}").format(
                    server=server, name=tool.name, rules=listing(rules)
                ),
                name=tool.name,
                payload=[asdict(f) for f in findings],
                server=server,
                outcome=Outcome.WITHHELD,
                by=self.name,
            )
        if tools and len(kept) == len(tools):
            self.trace.record(
                "host",
                "host",
                Kind.HOST_SCAN,
                _("scanner: {server}'s {n_tools} tool(s) look clean").format(server=server, n_tools=len(tools)),
                server=server,
                outcome=Outcome.ALLOWED,
                by=self.name,
            )
        return kept

    async def review(self, server: str, tool: Tool, name: str, arguments: dict[str, Any]) -> str | None:
        return self.reviewed.get((server, tool.name))

    def on_instructions(self, server: str, text: str) -> str:
        """Flagged instructions never reach the system prompt (the server's tools are withheld too, at listing)."""
        findings = [f for f in scan_text(text, "instructions", self.rules) if f.severity == "block"]
        if not findings:
            return text
        rules = listing(sorted({f.rule for f in findings}))
        self.trace.record(
            "host",
            "host",
            Kind.HOST_SCAN,
            _("scanner kept {server}'s instructions out of the system prompt: {rules}").format(
                server=server, rules=rules
            ),
            payload=[asdict(f) for f in findings],
            server=server,
            outcome=Outcome.WITHHELD,
            by=self.name,
        )
        return ""
