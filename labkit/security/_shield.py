"""The shield: the host's defences as switchable guards, a gate policy and a launch policy, in one place."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from labkit._i18n import N_, _, listing

from ..host import GatePolicy, Guard, Host, ServerSpec, confinement
from ..trace import Kind, Trace, headed
from ._approval import HOME_DOMAIN, ApprovalDesk
from ._checks import EgressGuard, HintsGuard, PathGuard, host_secrets
from ._confine import LabFolder, least_privilege, over_broad
from ._flows import TaintGuard
from ._forms import FormGuard
from ._pins import PinApprover, PinGuard, PinStore, trust_on_first_use
from ._render import SafeAnswer
from ._results import UntrustedResults
from ._scan_guard import ScanGuard

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFENCES", "TRUSTED_SERVERS", "Defences", "Shield"]

TRUSTED_SERVERS = frozenset({"logs", "charts", "orders", "plans"})
"""The lab's own servers: their annotations are believed and their results are not wrapped."""
TEACHING_KEY = b"notebook 07: a fixed key keeps the outputs reproducible; a real host draws a random one"

DEFENCES = {
    "pin": N_("pin each tool's definition, prompt and resource; a new or changed one waits for a person"),
    "scan": N_("scan descriptions, schemas and instructions; withhold what is flagged"),
    "namespace": N_("name tools <server>__<tool>, trusted servers listed first"),
    "hints": N_("ignore the annotations (e.g. readOnlyHint) of untrusted servers"),
    "approval": N_("a person approves each call that may change something, seeing its full arguments"),
    "paths": N_("refuse path arguments that leave the workspace, links resolved"),
    "egress": N_("refuse arguments that carry a private key or a host secret"),
    "taint": N_(
        "a call carrying untrusted data needs a person's yes; trusted data to an untrusted server is its own "
        "question, refused unless a person lets it go"
    ),
    "results": N_("strip hidden characters from results, wrap untrusted ones as data"),
    "least_privilege": N_("start servers in the workspace, with an empty home and no secrets"),
    "render": N_("links and images in the answer only to hosts the user allowed; the others shown as text"),
}


@dataclass(frozen=True)
class Defences:
    """Which of the host's defences are on; `Defences()` is all of them (notebook 07)."""

    pin: bool = True
    scan: bool = True
    namespace: bool = True
    hints: bool = True
    approval: bool = True
    paths: bool = True
    egress: bool = True
    taint: bool = True
    results: bool = True
    least_privilege: bool = True
    render: bool = True

    @classmethod
    def all(cls) -> Defences:
        return cls()

    @classmethod
    def none(cls) -> Defences:
        return cls(**{f.name: False for f in fields(cls)})

    @classmethod
    def only(cls, *names: str) -> Defences:
        return replace(cls.none(), **dict.fromkeys(names, True))

    def without(self, *names: str) -> Defences:
        return replace(self, **dict.fromkeys(names, False))

    @property
    def on(self) -> tuple[str, ...]:
        return tuple(f.name for f in fields(self) if getattr(self, f.name))

    def __str__(self) -> str:
        on = self.on
        return (
            _("all defences")
            if len(on) == len(DEFENCES)
            else _("no defences")
            if not on
            else _("only {on}").format(on=listing(on))
        )

    def table(self) -> pd.DataFrame:
        headings = {"defence": N_("defence"), "on": N_("on"), "what it does": N_("what it does")}
        return headed(
            ({"defence": n, "on": getattr(self, n), "what it does": _(w)} for n, w in DEFENCES.items()), headings
        )


class Shield:
    """Builds a `Host` with the chosen defences: guards, gate policy, launch policy and pins (notebook 07).

    `async with shield.open(servers) as host:` starts the servers and lists their tools through
    the guards. `desk` asks the person (full arguments); `pins` persists approved definitions;
    `secrets` are strings no argument may carry out, and the variables a careless launch passes on;
    `allowed_hosts` are the hosts the delivered answer may link to or load images from.
    """

    def __init__(
        self,
        trace: Trace,
        defences: Defences = Defences(),
        *,
        lab: LabFolder,
        desk: ApprovalDesk | None = None,
        pins: PinStore,
        pin_approver: PinApprover = trust_on_first_use,
        trusted: Iterable[str] = TRUSTED_SERVERS,
        key: bytes = TEACHING_KEY,
        canaries: Sequence[str] = (),
        secrets: Mapping[str, str] | None = None,
        allowed_hosts: Iterable[str] = (HOME_DOMAIN,),
    ) -> None:
        self.trace, self.defences, self.lab, self.pins, self.key = trace, defences, lab, pins, key
        self.canaries, self.secrets = tuple(canaries), dict(secrets or {})
        self.allowed_hosts = tuple(allowed_hosts)
        self.desk = desk if desk is not None else ApprovalDesk(trace)
        self.trusted_servers = frozenset(trusted)
        if self.desk.trusted is None:
            self.desk.trusted = self.trusted
        self.withheld: dict[tuple[str, str], str] = {}
        self._host: Host | None = None
        self.guards = self._guards(pin_approver)

    def trusted(self, server: str) -> bool:
        return server in self.trusted_servers

    def instructions(self, server: str) -> str | None:
        return self._host.pool.client(server).instructions if self._host is not None else None

    @property
    def policy(self) -> GatePolicy:
        """With approval off, the host's policy says yes to everything, and the gate says so."""
        return GatePolicy(approver=self.desk, approve_all=not self.defences.approval)

    def _guards(self, pin_approver: PinApprover) -> list[Guard]:
        on = self.defences
        egress = EgressGuard([*host_secrets(), *self.canaries, *self.secrets.values()])
        if on.egress:
            self.trace.redactors.append(egress.withheld)
        chosen: list[tuple[bool, Guard]] = [
            (
                on.pin,
                PinGuard(
                    self.trace,
                    self.pins,
                    pin_approver,
                    self.withheld,
                    instructions=self.instructions,
                    trusted=self.trusted,
                ),
            ),
            (
                on.scan,
                ScanGuard(
                    self.trace,
                    self.withheld,
                    instructions=self.instructions,
                    trusted=self.trusted,
                    namespaced=self.defences.namespace,
                ),
            ),
            (on.hints, HintsGuard(self.trace, self.trusted)),
            (on.paths, PathGuard(self.lab.workspace)),
            (on.egress, egress),
            (on.egress, FormGuard(self.trusted)),
            (
                on.taint,
                TaintGuard(
                    self.trace,
                    self.trusted,
                    ask=self.desk.ask_flow if on.approval else None,
                    ask_provenance=self.desk.ask_provenance if on.approval else None,
                ),
            ),
            (on.results, UntrustedResults(self.trace, self.trusted, self.key)),
            (on.render, SafeAnswer(self.trace, self.trusted, self.allowed_hosts)),
        ]
        return [guard for wanted, guard in chosen if wanted]

    def specs(self, servers: Sequence[ServerSpec]) -> list[ServerSpec]:
        """How each server is launched, and in which order it is listed (trusted first when namespacing)."""
        ordered = sorted(servers, key=lambda s: not self.trusted(s.name)) if self.defences.namespace else servers
        return [self._launch(spec) if spec.transport == "stdio" else spec for spec in ordered]

    def _launch(self, spec: ServerSpec) -> ServerSpec:
        if self.defences.least_privilege:
            return least_privilege(spec, self.lab, trusted=self.trusted(spec.name))
        return over_broad(spec, self.lab, self.secrets)

    @property
    def up(self) -> list[str]:
        """The servers of the open host that started (notebook 07)."""
        return self._host.up if self._host is not None else []

    @property
    def unavailable(self) -> dict[str, Exception]:
        """The servers of the open host that could not be started, with why (notebook 07)."""
        return self._host.unavailable if self._host is not None else {}

    @asynccontextmanager
    async def open(self, servers: Sequence[ServerSpec], **options: Any) -> AsyncIterator[Host]:
        """A started `Host` with these defences; options go to `Host` (round_cap, call_timeout, …).

        Each stdio server's confinement is said in the trace before it starts: confined, or not and why.
        """
        specs = self.specs(servers)
        for spec in specs:
            self._say_confinement(spec)
        host = Host(
            self.trace, specs, policy=self.policy, guards=self.guards, namespaced=self.defences.namespace, **options
        )
        host.connector.trust = self.trusted
        self._host = host
        async with host:
            yield host

    def _say_confinement(self, spec: ServerSpec) -> None:
        if spec.transport != "stdio" or not self.defences.least_privilege:
            return
        state = confinement()
        said = (
            _("{server} runs confined: {why}")
            if state.confined
            else _("{server} runs NOT confined, with the user's rights: {why}")
        ).format(server=spec.name, why=state.why)
        self.trace.record("host", "host", Kind.HOST_NOTE, said, server=spec.name, confined=state.confined)
