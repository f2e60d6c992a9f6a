"""`import labkit` offers what its users call: the names the notebooks and the README use, no more.

The lab's own tests, benchmarks and classroom driver are not its users: they import from the wings.
"""

from __future__ import annotations
import __future__

import ast
import importlib
import inspect
import json
import re
from pathlib import Path

import labkit

ROOT = Path(__file__).resolve().parent.parent
_PROSE = ("README.md", "README.zh-CN.md", "START_HERE.md", "CONTRIBUTING.md")
_WINGS = ("trace", "processes", "host", "security", "skills", "simulator", "lessons")


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
    wings_and_modules = {*_WINGS, "errors"}
    return {name for name in found if not name.startswith("_") and name not in wings_and_modules}


def test_the_top_level_lists_exactly_the_names_its_users_call() -> None:
    used, listed = _used(), set(labkit.__all__)
    assert sorted(used - listed) == [], "used through `labkit` but not listed in labkit/__init__.py's __all__"
    assert sorted(listed - used) == [], "listed in labkit.__all__ but used by no notebook or README"


def test_dir_shows_the_list_and_every_name_resolves() -> None:
    assert dir(labkit) == sorted(labkit.__all__)
    assert [name for name in labkit.__all__ if getattr(labkit, name, None) is None] == []


def test_a_wing_s_other_names_are_reached_through_the_wing_alone() -> None:
    wings = {name: importlib.import_module(f"labkit.{name}") for name in _WINGS}
    unlisted = {name for wing in wings.values() for name in wing.__all__} - set(labkit.__all__)
    assert unlisted, "every wing offers more than the facade lists"
    assert sorted(name for name in unlisted if hasattr(labkit, name)) == []
    # What the module really holds besides its dunders, its submodules and its `from __future__` line: the listed
    # names and private helpers.
    held = {
        name
        for name, value in vars(labkit).items()
        if not name.startswith("_") and not inspect.ismodule(value) and value is not getattr(__future__, name, None)
    }
    assert held <= set(labkit.__all__)
