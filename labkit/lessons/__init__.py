"""The lessons: the lab's scenarios, error taxonomy, attack lab, skill runs and exercise checks.

The only wing that knows the lab's own servers (`servers/`) and the simulated model; everything
here is built from the host, the trace, the defences and the skills, as a learner could build it.
"""

from servers._wiring import data_dir

from ._attack_report import outcomes, story
from ._attack_runs import AttackRun, run_attack, run_attacks
from ._attacks import ATTACKS, Attack, Evidence
from ._benign import HELD_OUT, benign_tools, false_flags, lab_server_tools, published_tools
from ._context_cost import CACHE_READ, CACHE_WRITE, cost_summary, padding_tools, request_costs
from ._exercises import TODO, Exercise, Verdict, register, run_sync
from ._model import make_client
from ._remote import authorization_server, client_site
from ._runs import SCENARIO_NAMES, TASKS, ScenarioRun, run_scenario
from ._security_lab import (
    CANARIES,
    KEY_CANARY,
    TOKEN_CANARY,
    TOKEN_ENV,
    GroundTruth,
    canaries_in,
    local_paths,
    prepare_lab,
)
from ._skill_context import context_ledger, context_table, upfront_table
from ._skill_eval import ACTIVATION_SET, METHOD_SET, run_activation_eval, run_method_eval
from ._skill_runs import BASE_PROMPT, SKILLS_DIR, SkillRun, run_with_skills, scripted_approver
from ._taxonomy import FailureRow, classify, failure_table, tool_results_sent
from ._tool_eval import (
    EVAL_SET,
    VERDICTS,
    EvalCase,
    EvalOutcome,
    EvalSet,
    ToolChoiceReport,
    load_eval_set,
    run_tool_eval,
    server_tools,
)
from .checks import check

__all__ = [
    "ACTIVATION_SET",
    "ATTACKS",
    "BASE_PROMPT",
    "CACHE_READ",
    "CACHE_WRITE",
    "CANARIES",
    "EVAL_SET",
    "HELD_OUT",
    "KEY_CANARY",
    "METHOD_SET",
    "SCENARIO_NAMES",
    "SKILLS_DIR",
    "TASKS",
    "TODO",
    "TOKEN_CANARY",
    "TOKEN_ENV",
    "VERDICTS",
    "Attack",
    "AttackRun",
    "EvalCase",
    "EvalOutcome",
    "EvalSet",
    "Evidence",
    "Exercise",
    "FailureRow",
    "GroundTruth",
    "ScenarioRun",
    "SkillRun",
    "ToolChoiceReport",
    "Verdict",
    "authorization_server",
    "benign_tools",
    "canaries_in",
    "check",
    "classify",
    "client_site",
    "context_ledger",
    "context_table",
    "cost_summary",
    "data_dir",
    "failure_table",
    "false_flags",
    "lab_server_tools",
    "load_eval_set",
    "local_paths",
    "make_client",
    "outcomes",
    "padding_tools",
    "prepare_lab",
    "published_tools",
    "register",
    "request_costs",
    "run_activation_eval",
    "run_attack",
    "run_attacks",
    "run_method_eval",
    "run_scenario",
    "run_sync",
    "run_tool_eval",
    "run_with_skills",
    "scripted_approver",
    "server_tools",
    "story",
    "tool_results_sent",
    "upfront_table",
]
