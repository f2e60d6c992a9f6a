"""The host's defences against untrusted MCP servers (notebook 07), each a switchable `Guard` or launch policy.

- `scanner`: rules over every string of a definition and the server's instructions (`ScanGuard`);
- `pins`: a SHA-256 pin per tool definition, kept on disk; a new or changed tool waits for a person (`PinGuard`);
- `checks`: untrusted annotations ignored, withheld tools blocked, paths kept in the workspace, secrets kept in;
- `results`: hidden characters stripped, untrusted results wrapped as data, and the taint they leave;
- `approval`: the person at the host, shown the full arguments (an ipywidgets form, or a scripted user in CI);
- `lab`: the fake home with the canary key, the workspace, and least-privilege vs over-broad launches;
- `shield`: `Defences` (which are on) and `Shield` (a `Host` built with them);
- `attacks` and `report`: the planted attacks, run with the naive model, and their stories;
- `preflight`: the five questions to ask before going live, answered with evidence;
- `benign`: the benign set the scanner must not flag.
"""

from .approval import ApprovalDesk, careful_user, render_arguments
from .attacks import ATTACKS, Attack, AttackRun, run_attack
from .benign import benign_tools, false_flags
from .hidden import count_hidden, readable, reveal, strip_hidden
from .lab import CANARIES, GroundTruth, LabFolder, least_privilege, over_broad, prepare_lab
from .pins import PinGuard, PinStore, fingerprint, trust_on_first_use
from .preflight import QUESTIONS, answers_table, preflight
from .report import outcomes, story
from .scanner import RULES, Finding, Rule, ScanGuard, findings_table, scan_text, scan_tool
from .shield import DEFENCES, TRUSTED_SERVERS, Defences, Shield

__all__ = [
    "ATTACKS",
    "CANARIES",
    "DEFENCES",
    "QUESTIONS",
    "RULES",
    "TRUSTED_SERVERS",
    "ApprovalDesk",
    "Attack",
    "AttackRun",
    "Defences",
    "Finding",
    "GroundTruth",
    "LabFolder",
    "PinGuard",
    "PinStore",
    "Rule",
    "ScanGuard",
    "Shield",
    "answers_table",
    "benign_tools",
    "careful_user",
    "count_hidden",
    "false_flags",
    "findings_table",
    "fingerprint",
    "least_privilege",
    "outcomes",
    "over_broad",
    "preflight",
    "prepare_lab",
    "readable",
    "render_arguments",
    "reveal",
    "run_attack",
    "scan_text",
    "scan_tool",
    "story",
    "strip_hidden",
    "trust_on_first_use",
]
