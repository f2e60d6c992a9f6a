"""Where a server runs: the lab folder (fake home, workspace, sandbox) and least-privilege vs over-broad launches."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ..host import WORKDIR_ENV, LabTempDir, ServerSpec, confinement, server_env
from ..server_contract import DATA_DIR_ENV

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
    """`<data>/untrusted/lab`: `home` (fake, holding the canary key), `workspace`, `sandbox` (a private folder per
    server) and `ground_truth` (what the untrusted servers received: the lab's referee) (notebook 07)."""

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

    @property
    def ground_truth(self) -> Path:
        return self.root / "ground-truth"

    def private(self, server: str) -> Path:
        """The folder one server may call its own: its HOME and TMPDIR, shared with no other server."""
        return self.sandbox / server


def over_broad(spec: ServerSpec, lab: LabFolder, secrets: Mapping[str, str] | None = None) -> ServerSpec:
    """How a careless host launches a server: in the user's home, the host's secrets in its environment (notebook 07).

    `secrets` are the host's variables such a host passes on (in the lab: a canary token in a fake home).
    """
    env = {"HOME": str(lab.home), WORKDIR_ENV: str(lab.home), **(secrets or {})}
    return replace(spec, env={**spec.env, **env})


def least_privilege(spec: ServerSpec, lab: LabFolder, *, trusted: bool = False) -> ServerSpec:
    """The launch the shield uses: no secrets, a private HOME and TMPDIR, the workspace as working folder (notebook 07).

    Where the machine can (`confinement()`), the server also runs under bubblewrap, which shows it only what is
    named here: an untrusted server reads the workspace and writes only its private folder (a lab server also
    the lab's ground truth, the attacker's own storage); the data folder, the other servers' stores, chart
    spaces, pins, the fake home and the host's processes are not in its world at all. A trusted lab server
    writes the data folder that holds its business system, and nothing of the user's.
    """
    private = lab.private(spec.name)
    env = {"HOME": str(private), WORKDIR_ENV: str(lab.workspace), "TMPDIR": str(private)}
    launched = replace(spec, env={**spec.env, **env}, sandbox=confinement().confined)
    if trusted:
        data = server_env(launched).get(DATA_DIR_ENV)
        return replace(launched, writable=(*spec.writable, data) if data else spec.writable)
    return replace(
        launched,
        readable=(*spec.readable, str(lab.workspace)),
        writable=(*spec.writable, str(lab.ground_truth)) if spec.lab_server else spec.writable,
    )
