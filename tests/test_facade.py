"""`import labkit` offers what its users call: the names the notebooks, the README and the tests use, no more."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import labkit

ROOT = Path(__file__).resolve().parent.parent
_PROSE = ("README.md", "README.zh-CN.md", "START_HERE.md", "CONTRIBUTING.md")
_USERS = ("tests", "benchmarks", "classroom")


def _names_in(code: str) -> set[str]:
    """`from labkit import X` and `labkit.X` in one piece of code (notebook magics skipped)."""
    code = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        tree = compile(code, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    except SyntaxError:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "labkit" and node.level == 0:
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "labkit":
            found.add(node.attr)
    return found


def _used() -> set[str]:
    found: set[str] = set()
    for notebook in [*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("solutions/*.ipynb")]:
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                found |= _names_in("".join(cell["source"]))
    for page in _PROSE:
        found.update(re.findall(r"\blabkit\.([A-Za-z]\w*)", (ROOT / page).read_text(encoding="utf-8")))
    for folder in _USERS:
        for path in (ROOT / folder).rglob("*.py"):
            found |= _names_in(path.read_text(encoding="utf-8"))
    wings_and_modules = {"trace", "host", "security", "skills", "simulator", "lessons", "errors"}
    return {name for name in found if not name.startswith("_") and name not in wings_and_modules}


def test_the_top_level_lists_exactly_the_names_its_users_call() -> None:
    used, listed = _used(), set(labkit.__all__)
    assert sorted(used - listed) == [], "used through `labkit` but not listed in labkit/__init__.py's __all__"
    assert sorted(listed - used) == [], "listed in labkit.__all__ but used by no notebook, README or test"


def test_dir_shows_the_list_and_every_name_resolves() -> None:
    assert dir(labkit) == sorted(labkit.__all__)
    assert [name for name in labkit.__all__ if getattr(labkit, name, None) is None] == []
