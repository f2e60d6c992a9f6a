"""labkit: the teaching lab's toolkit — record a run of an agent using MCP tools, and show it.

The wings, lowest first: `labkit.trace` (events and the views drawn from them), `labkit.processes` (a server as a
process: started, supervised, confined, capped, stopped), `labkit.host` (MCP clients, the model loop and every
decision; with `labkit.security` and `labkit.skills` as its features), `labkit.simulator` (the simulated teaching
model) and `labkit.lessons` (the lab's scenarios, attacks and exercise checks). Here are the names the notebooks and
the README use (`__all__`, measured: `tests/test_facade.py`; the lab's own tests, benchmarks and classroom driver
import from the wings), each imported from its wing on first use, so `import labkit` stays light; everything else is
reached through its wing only (`labkit.processes.max_message_bytes`).
"""

from __future__ import annotations

import atexit as _atexit
import gc as _gc
import importlib as _importlib
import sys as _sys
from typing import Any as _Any

# Finalization runs full collections over everything still alive: with the SDKs, pandas and matplotlib
# loaded (~330k objects) that took 1.2-1.3 s at every kernel shutdown and CLI exit, for memory the OS
# takes back anyway. Frozen objects are skipped; Python promises no __del__ at exit for what is still
# alive, and atexit and weakref.finalize callbacks still run.
_atexit.register(_gc.freeze)

_WINGS = ("trace", "processes", "host", "security", "skills", "simulator", "lessons")

__all__ = [
    "ACTIVATION_SET",
    "ACTORS",
    "ATTACKS",
    "BASE_PROMPT",
    "ESTIMATOR",
    "HELD_OUT",
    "MODEL_NAME",
    "SKILLS_DIR",
    "TODO",
    "TOKEN_CANARY",
    "TOKEN_ENV",
    "ApprovalDesk",
    "AuthorizationRefused",
    "Conversation",
    "Defences",
    "GatePolicy",
    "Host",
    "HttpRefused",
    "LabTempDir",
    "NameMap",
    "PinStore",
    "ProgressUpdates",
    "Rule",
    "ServerSpec",
    "ServerStartError",
    "Shield",
    "SignIn",
    "SkillError",
    "SkillLibrary",
    "SkillLoader",
    "ToolCall",
    "ToolResult",
    "Trace",
    "answers_table",
    "authorization_server",
    "benign_tools",
    "call_spans",
    "careful_user",
    "check",
    "choose_skill",
    "client_site",
    "confinement",
    "context_ledger",
    "context_table",
    "convert_tool",
    "cost_summary",
    "count_steps",
    "data_dir",
    "elicitation_callback",
    "estimate_tokens",
    "export_otlp",
    "failure_table",
    "false_flags",
    "findings_table",
    "fingerprint",
    "fold",
    "group_steps",
    "host_state_dir",
    "http_server",
    "http_transport",
    "least_privilege",
    "load_eval_set",
    "local_paths",
    "make_client",
    "outcomes",
    "over_broad",
    "overlap_saving",
    "padding_tools",
    "parse_skill",
    "preflight",
    "prepare_lab",
    "pretty",
    "progress",
    "published_tools",
    "read_catalog",
    "read_method",
    "request_costs",
    "result_as_data",
    "reveal",
    "run_activation_eval",
    "run_attack",
    "run_attacks",
    "run_scenario",
    "run_tool_eval",
    "run_with_skills",
    "save_otlp",
    "scan_tool",
    "scripted_answers",
    "scripted_approver",
    "scripted_form",
    "select",
    "select_model",
    "sequence_diagram",
    "server_tools",
    "shared_words",
    "skill_files",
    "stdio_transport",
    "steps_table",
    "story",
    "strict_schema",
    "table",
    "to_mcp_call",
    "tool_results_sent",
    "upfront_table",
    "widget_form",
    "wire_tool",
    "workspace_tools",
]


def __getattr__(name: str) -> _Any:
    # A listed name is imported from its wing on first use; any other name is reached through its wing.
    if name in __all__:
        for wing in _WINGS:
            module = _importlib.import_module(f"{__name__}.{wing}")
            if name in module.__all__:
                value = getattr(module, name)
                globals()[name] = value
                return value
    raise AttributeError(f"module 'labkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)


def _errors_shown_plainly() -> None:
    if "IPython" in _sys.modules:  # in a notebook, a LabError shows as its message, not the lab's frames under it
        from ._notebook_errors import show_errors_plainly

        show_errors_plainly()


_errors_shown_plainly()
