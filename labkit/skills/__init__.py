"""Agent Skills for the lab's host: SKILL.md folders, validated, loaded in three tiers, every load in the trace.

A skill is a folder with a `SKILL.md` (YAML front matter with `name` and `description`, then a
Markdown body) and optional files (`references/`, `scripts/`, `assets/`). The host puts only the
catalog — names and descriptions — into the system prompt (tier 1); the model loads a body with the
host-side tool `load_skill` (tier 2) and a file with `read_skill_resource` (tier 3). A skill is
text: it can steer the model, never the host's gate (notebook 06).
"""

from .context import ESTIMATOR, context_ledger, context_table, estimate_tokens, upfront_table
from .library import CATALOG_INTRO, SkillLibrary, skill_files
from .loader import SkillLoader
from .runs import BASE_PROMPT, SKILLS_DIR, SkillRun, run_with_skills, scripted_approver
from .skill import FIELDS, MAX_DESCRIPTION, MAX_NAME, Skill, SkillError, load_skill, parse_skill
from .workspace import check_python_source, workspace_tools

__all__ = [
    "BASE_PROMPT",
    "CATALOG_INTRO",
    "ESTIMATOR",
    "FIELDS",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "SKILLS_DIR",
    "Skill",
    "SkillError",
    "SkillLibrary",
    "SkillLoader",
    "SkillRun",
    "check_python_source",
    "context_ledger",
    "context_table",
    "estimate_tokens",
    "load_skill",
    "parse_skill",
    "run_with_skills",
    "scripted_approver",
    "skill_files",
    "upfront_table",
    "workspace_tools",
]
