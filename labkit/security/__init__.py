"""The host's defences against untrusted MCP servers (notebook 07), each a switchable `Guard` or launch policy.

- `_scanner`: rules over every string of a definition and the server's instructions; `_scan_guard` applies them
  (`ScanGuard`);
- `_pins`: a SHA-256 pin per tool definition, kept on disk; a new or changed tool waits for a person (`PinGuard`);
- `_checks`: untrusted annotations ignored, paths (resolved) kept in the workspace, secrets kept in and out of the
  trace;
- `_results`: hidden characters stripped, untrusted results wrapped as data;
- `_flows`: the taint results leave, and trusted data on its way to an untrusted server as a question of its own;
- `_approval`: the person at the host, shown the full arguments (an ipywidgets form, or a scripted user in CI);
- `_render`: links and images in the delivered answer only to hosts the user allowed;
- `_confine`: the lab folder (fake home, workspace, sandbox) and least-privilege vs over-broad launches;
- `_shield`: `Defences` (which are on) and `Shield` (a `Host` built with them);
- `_preflight`: the five questions to ask before going live, answered with evidence.
The attacks, their stories and the benign set are lesson material: `labkit.lessons`.
"""

from ._approval import (
    ApprovalDesk,
    ApprovalRequest,
    approve_all,
    careful_flow,
    careful_provenance,
    careful_user,
    render_arguments,
)
from ._checks import EgressGuard, HintsGuard, PathGuard, host_secrets
from ._confine import LabFolder, host_state_dir, least_privilege, over_broad
from ._flows import Flow, Provenance, TaintGuard
from ._hidden import HIDDEN, count_hidden, readable, reveal, strip_hidden
from ._pins import PinApprover, PinGuard, PinStore, fingerprint, trust_on_first_use
from ._preflight import QUESTIONS, answers_table, preflight
from ._render import SafeAnswer, neutralise
from ._results import UntrustedResults, wrap_untrusted
from ._scan_guard import ScanGuard
from ._scanner import RULES, Finding, Rule, findings_table, scan_text, scan_tool, texts_of
from ._shield import DEFENCES, TRUSTED_SERVERS, Defences, Shield

__all__ = [
    "DEFENCES",
    "HIDDEN",
    "QUESTIONS",
    "RULES",
    "TRUSTED_SERVERS",
    "ApprovalDesk",
    "ApprovalRequest",
    "Defences",
    "EgressGuard",
    "Finding",
    "Flow",
    "HintsGuard",
    "LabFolder",
    "PathGuard",
    "PinApprover",
    "PinGuard",
    "PinStore",
    "Provenance",
    "Rule",
    "SafeAnswer",
    "ScanGuard",
    "Shield",
    "TaintGuard",
    "UntrustedResults",
    "answers_table",
    "approve_all",
    "careful_flow",
    "careful_provenance",
    "careful_user",
    "count_hidden",
    "findings_table",
    "fingerprint",
    "host_secrets",
    "host_state_dir",
    "least_privilege",
    "neutralise",
    "over_broad",
    "preflight",
    "readable",
    "render_arguments",
    "reveal",
    "scan_text",
    "scan_tool",
    "strip_hidden",
    "texts_of",
    "trust_on_first_use",
    "wrap_untrusted",
]
