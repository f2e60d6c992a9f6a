"""Where a server runs: the lab folder (fake home, workspace, sandbox) and least-privilege vs over-broad launches."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ..host import WORKDIR_ENV, LabTempDir, ServerSpec, confinement

__all__ = ["LabFolder", "host_state_dir", "least_privilege", "over_broad"]


def host_state_dir() -> Path:
    """A folder for the host's own state (pins), outside the data folder the servers share (notebook 07).

    Private to this user (mode 0700), removed when the process exits. Only a sandbox (`confine`) keeps a
    server of the same user out of it.
    """
    return _host_state().path


@functools.cache
def _host_state() -> LabTempDir:
    return LabTempDir("host-state")


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
    """The launch the shield uses: working folder = the workspace, HOME = an empty sandbox, no secrets (notebook 07).

    Where the machine can (`confinement()`), the server also runs under bubblewrap: the user's home,
    the fake home, /tmp (the host's pins) and the host's processes out of its sight.
    """
    env = {"HOME": str(lab.sandbox), WORKDIR_ENV: str(lab.workspace), "TMPDIR": str(lab.sandbox)}
    return replace(spec, env={**spec.env, **env}, sandbox=confinement().confined, hide=(str(lab.home),))
