"""Docstrings that stay true: the files they cite exist; a top-level helper names the notebook that introduces it."""

from __future__ import annotations

import ast
import inspect
import io
import json
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import labkit

ROOT = Path(__file__).resolve().parent.parent
_CITED = re.compile(
    r"(?<![\w/.<$-])((?:\.{1,2}/|[\w.-]+/)*[\w*-]+\.(?:py|md|json|ipynb|toml|cfg|po|pot|mo|ya?ml|txt|sh|sqlite|csv))\b"
)
# Names a docstring gives as an example of someone else's file, not as a file of the lab.
_EXAMPLES = {
    "SKILL.md": "any skill's own file",
    "mcp.py": "a learner's file that shadows a module",
    "numpy.py": "a learner's file that shadows a module",
    "selectors.py": "a learner's file that shadows a module",
    "SCRIPT.py": "a placeholder in `python SCRIPT.py ARGS`",
    "ops_demo.py": "the file notebook 08 has the learner write",
    "logs.sqlite": "the log store in the data folder",
    "orders.sqlite": "the order database in the data folder",
    "pending.csv": "a file the jobs server writes in the data folder",
    "notes.md": "a file in the untrusted server's folder",
    "notes.txt": "a file the escape attack looks for",
    "handover.md": "a file the escape attack looks for",
    ".vscode/mcp.json": "where VS Code keeps a project's MCP config",
    ".cursor/mcp.json": "where Cursor keeps a project's MCP config",
}
_CODE = ("labkit", "servers", "tests", "tools", "benchmarks", "classroom")


def _texts(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every docstring (modules, classes, functions, attributes) and comment in `path`."""
    source = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            yield node.lineno, node.value.value
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def test_every_file_a_docstring_or_comment_cites_exists() -> None:
    # A path resolves from the repository or from the citing file's folder; a bare file name may be anywhere in the
    # lab's code (`_keeper.py` from beside `labkit/_warm`).
    names = {p.name for folder in _CODE for p in (ROOT / folder).rglob("*")}
    missing = []
    for folder in ("labkit", "servers"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for line, text in _texts(path):
                for cited in _CITED.findall(text):
                    found = any(ROOT.glob(cited)) or any(path.parent.glob(cited)) or cited in names
                    if not found and cited not in _EXAMPLES:
                        missing.append(f"{path.relative_to(ROOT)}:{line} cites {cited}")
    assert missing == []


def _mentions() -> dict[str, str]:
    """Each notebook's number and all its text, lesson and solution."""
    text: dict[str, str] = {}
    for notebook in sorted([*ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("solutions/*.ipynb")]):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        text[notebook.name[:2]] = text.get(notebook.name[:2], "") + "\n".join("".join(c["source"]) for c in cells)
    return text


def test_each_top_level_helper_names_the_notebook_that_introduces_it() -> None:
    # The notebook named must mention the helper; one that no notebook mentions says it is the README's.
    notebooks, readme = _mentions(), (ROOT / "README.md").read_text(encoding="utf-8")
    untrue = []
    for name in labkit.__all__:
        helper = getattr(labkit, name)
        if not (inspect.isfunction(helper) or inspect.isclass(helper)):
            continue
        doc = inspect.getdoc(helper) or ""
        cited = set(re.findall(r"\d\d", " ".join(re.findall(r"notebooks? (\d\d(?:(?:, | and | or |-)\d\d)*)", doc))))
        mentioned = {number for number, text in notebooks.items() if re.search(rf"\b{name}\b", text)}
        if mentioned and not cited & mentioned:
            untrue.append(f"{name}: cites notebook {sorted(cited)}, mentioned in {sorted(mentioned)}")
        elif not mentioned and not ("(README)" in doc and f"labkit.{name}" in readme):
            untrue.append(f"{name}: in no notebook, and its docstring does not say README, which must use it")
    assert untrue == []
