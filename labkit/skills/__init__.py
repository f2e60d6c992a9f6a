"""Agent Skills for the lab's host: SKILL.md folders, validated, loaded in three tiers, every load in the trace.

A skill is a folder with a `SKILL.md` (YAML front matter with `name` and `description`, then a
Markdown body) and optional files (`references/`, `scripts/`, `assets/`). The host puts only the
catalog — names and descriptions — into the system prompt (tier 1); the model loads a body with the
host-side tool `load_skill` (tier 2) and a file with `read_skill_resource` (tier 3). A skill is
text: it can steer the model, never the host's gate (notebook 06). The lab's skill runs and context
tables are lesson material: `labkit.lessons`.
"""

from ._library import CATALOG_INTRO, SkillLibrary, skill_files
from ._loader import SkillLoader
from ._skill import FIELDS, MAX_DESCRIPTION, MAX_NAME, Skill, SkillError, load_skill, parse_skill
from ._workspace import check_python_source, workspace_tools

__all__ = [
    "CATALOG_INTRO",
    "FIELDS",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "Skill",
    "SkillError",
    "SkillLibrary",
    "SkillLoader",
    "check_python_source",
    "load_skill",
    "parse_skill",
    "skill_files",
    "workspace_tools",
]
