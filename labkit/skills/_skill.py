"""One skill in the Agent Skills format: a folder with SKILL.md (YAML front matter, Markdown body) and resources."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from labkit._i18n import _, listing
from labkit.errors import LabError

__all__ = [
    "FIELDS",
    "MAX_COMPATIBILITY",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "RESOURCE_FOLDERS",
    "Skill",
    "SkillError",
    "load_skill",
    "parse_skill",
]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
"""The front-matter fields the Agent Skills specification defines; `name` and `description` are required."""
RESOURCE_FOLDERS = ("references", "scripts", "assets")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.S)
_NAME_CHARS = re.compile(r"[a-z0-9-]+")


class SkillError(LabError, ValueError):
    """A SKILL.md that breaks the format; `problems` lists every rule it breaks, one sentence each (notebook 06)."""

    def __init__(self, folder: str, problems: list[str]) -> None:
        self.folder = folder
        self.problems = tuple(problems)
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(_("skill folder {folder!r} is not a valid skill:\n{lines}").format(folder=folder, lines=lines))


@dataclass(frozen=True)
class Skill:
    """A validated skill: its front matter, its Markdown body and the resource files beside it (notebook 06)."""

    name: str
    description: str
    body: str
    text: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()
    folder: Path | None = None
    resources: tuple[str, ...] = ()

    @property
    def front_matter(self) -> dict[str, Any]:
        """The optional fields that are set, next to the two required ones."""
        optional = {
            "license": self.license,
            "compatibility": self.compatibility,
            "metadata": self.metadata or None,
            "allowed-tools": " ".join(self.allowed_tools) or None,
        }
        return {"name": self.name, "description": self.description} | {k: v for k, v in optional.items() if v}


def parse_skill(text: str, folder: str) -> Skill:
    """Validate a SKILL.md's text as if it sat in a folder called `folder`; raise SkillError listing every problem.

    The rules are the specification's: front matter between `---` lines, a YAML mapping with only
    the six defined fields; `name` 1–64 characters of lowercase letters, digits and single hyphens,
    not at either end, equal to the folder's name; `description` 1–1024 characters (notebook 06).
    """
    match = _FRONT_MATTER.match(text)
    if match is None:
        raise SkillError(
            folder, [_("SKILL.md must start with YAML front matter: a '---' line, the fields, a '---' line")]
        )
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        raise SkillError(
            folder, [_("the front matter is not valid YAML: {_first_line}").format(_first_line=_first_line(error))]
        ) from None
    if not isinstance(data, dict):
        raise SkillError(folder, [_("the front matter must be a YAML mapping of fields, such as 'name: my-skill'")])
    problems = _unknown_fields(data) + _name_problems(data, folder) + _description_problems(data)
    problems += _optional_problems(data)
    if problems:
        raise SkillError(folder, problems)
    tools = data.get("allowed-tools") or ()
    return Skill(
        name=data["name"],
        description=data["description"].strip(),
        body=match.group(2).strip("\n") + "\n",
        text=text,
        license=data.get("license"),
        compatibility=data.get("compatibility"),
        metadata=dict(data.get("metadata") or {}),
        allowed_tools=tuple(tools.split() if isinstance(tools, str) else tools),
    )


def load_skill(folder: str | Path) -> Skill:
    """Read and validate `<folder>/SKILL.md`, and list the files beside it as its resources (notebook 06)."""
    folder = Path(folder)
    source = folder / "SKILL.md"
    if not source.is_file():
        raise SkillError(folder.name, [_("the folder has no SKILL.md")])
    skill = parse_skill(source.read_text(encoding="utf-8"), folder.name)
    resources = sorted(
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p != source and "__pycache__" not in p.parts
    )
    return Skill(**{**skill.__dict__, "folder": folder, "resources": tuple(resources)})


def _unknown_fields(data: dict[str, Any]) -> list[str]:
    unknown = sorted(str(k) for k in data if k not in FIELDS)
    return (
        [
            _(
                "unknown front-matter field(s) {unknown}; the fields are {FIELDS} (put your own keys under 'metadata')"
            ).format(unknown=listing(unknown), FIELDS=listing(FIELDS))
        ]
        if unknown
        else []
    )


def _name_problems(data: dict[str, Any], folder: str) -> list[str]:
    name = data.get("name")
    if name is None:
        return [_("the required field 'name' is missing")]
    if not isinstance(name, str) or not name:
        return [_("'name' must be a non-empty string, not {name!r}").format(name=name)]
    problems = []
    if len(name) > MAX_NAME:
        problems.append(
            _("'name' has {n_name} characters; at most {MAX_NAME} are allowed").format(
                n_name=len(name), MAX_NAME=MAX_NAME
            )
        )
    if name != name.lower():
        problems.append(
            _("'name' {name!r} has capital letters; use lowercase, e.g. {lower!r}").format(
                name=name, lower=_valid_name(name)
            )
        )
    if not _NAME_CHARS.fullmatch(name.lower()):
        bad = sorted({c for c in name.lower() if not _NAME_CHARS.fullmatch(c)})
        problems.append(
            _("'name' {name!r} contains {characters}; only a-z, 0-9 and '-' are allowed").format(
                name=name, characters=listing(map(repr, bad))
            )
        )
    if name.startswith("-") or name.endswith("-"):
        problems.append(_("'name' {name!r} must not start or end with a hyphen").format(name=name))
    if "--" in name:
        problems.append(_("'name' {name!r} must not contain two hyphens in a row").format(name=name))
    if name != folder:
        problems.append(
            _("'name' {name!r} does not match the folder name {folder!r}; they must be equal").format(
                name=name, folder=folder
            )
        )
    return problems


def _description_problems(data: dict[str, Any]) -> list[str]:
    description = data.get("description")
    if description is None:
        return [_("the required field 'description' is missing: say what the skill does and when to use it")]
    if not isinstance(description, str) or not description.strip():
        return [_("'description' must be a non-empty string: say what the skill does and when to use it")]
    if len(description) > MAX_DESCRIPTION:
        return [
            _("'description' has {n_description} characters; at most {MAX_DESCRIPTION} are allowed").format(
                n_description=len(description), MAX_DESCRIPTION=MAX_DESCRIPTION
            )
        ]
    return []


def _optional_problems(data: dict[str, Any]) -> list[str]:
    problems = []
    if "license" in data and not isinstance(data["license"], str):
        problems.append(_("'license' must be a string, e.g. 'MIT' or 'LICENSE.txt'"))
    compatibility = data.get("compatibility", "")
    if "compatibility" in data and not (isinstance(compatibility, str) and 0 < len(compatibility) <= MAX_COMPATIBILITY):
        problems.append(
            _("'compatibility' must be a string of 1 to {MAX_COMPATIBILITY} characters").format(
                MAX_COMPATIBILITY=MAX_COMPATIBILITY
            )
        )
    metadata = data.get("metadata")
    if "metadata" in data and not (
        isinstance(metadata, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        problems.append(_("'metadata' must map strings to strings (quote numbers: version: \"1.0\")"))
    tools = data.get("allowed-tools")
    if "allowed-tools" in data and not (
        isinstance(tools, str) or (isinstance(tools, list) and all(isinstance(t, str) for t in tools))
    ):
        problems.append(_("'allowed-tools' must be a space-separated string or a list of strings"))
    return problems


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0]


def _valid_name(name: str) -> str:
    """The name the rules allow that is nearest to `name`: lowercase, other characters as single hyphens."""
    hyphenated = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:MAX_NAME].rstrip("-")
    return hyphenated or "skill"
