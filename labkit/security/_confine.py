"""Where a server runs: the lab folder (fake home, workspace, sandbox) and least-privilege vs over-broad launches."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ..host import WORKDIR_ENV, ServerSpec

__all__ = ["LabFolder", "least_privilege", "over_broad"]


@dataclass(frozen=True)
class LabFolder:
    """`<data>/untrusted/lab`: `home` (fake, holding the canary key), `workspace`, an empty `sandbox` (notebook 07)."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def sandbox(self) -> Path:
        return self.root / "sandbox"


def over_broad(spec: ServerSpec, lab: LabFolder, secrets: Mapping[str, str] | None = None) -> ServerSpec:
    """How a careless host launches a server: in the user's home, the host's secrets in its environment (notebook 07).

    `secrets` are the host's variables such a host passes on (in the lab: a canary token in a fake home).
    """
    env = {"HOME": str(lab.home), WORKDIR_ENV: str(lab.home), **(secrets or {})}
    return replace(spec, env={**spec.env, **env})


def least_privilege(spec: ServerSpec, lab: LabFolder) -> ServerSpec:
    """The launch the shield uses: working folder = the workspace, HOME = an empty sandbox, no secrets (notebook 07)."""
    env = {"HOME": str(lab.sandbox), WORKDIR_ENV: str(lab.workspace), "TMPDIR": str(lab.sandbox)}
    return replace(spec, env={**spec.env, **env})
