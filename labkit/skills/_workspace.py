"""Read-only host-side tools over one folder, for the code-review skill: read a file, check Python statically."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

from mcp_types import Tool, ToolAnnotations

from ..host import LocalTool, LocalToolResult

__all__ = ["check_python_source", "workspace_tools"]

_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
_SEVERITY = {"high": 0, "medium": 1, "low": 2}
_MAX_BYTES = 100_000
_PATH = {"type": "string", "description": "A path inside the workspace, e.g. servers/plans.py"}


def check_python_source(source: str) -> list[dict[str, Any]]:
    """Static findings in Python source, most severe first: line, severity, rule, message (notebook 06).

    Checks: syntax errors, bare `except:`, mutable default arguments, `== None`, unused imports,
    public functions without a docstring. A teaching linter in ~40 lines, not a replacement for ruff.
    """
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return [_finding(error.lineno or 0, "high", "syntax-error", str(error.msg))]
    found = []
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {
        n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler) and node.type is None:
            found.append(
                _finding(
                    node.lineno,
                    "high",
                    "bare-except",
                    "bare `except:` hides every error; name the exceptions you expect",
                )
            )
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                if isinstance(default, (ast.List, ast.Dict, ast.Set)):
                    found.append(
                        _finding(
                            default.lineno,
                            "high",
                            "mutable-default",
                            f"`{node.name}` has a mutable default argument, shared by every call; default to None",
                        )
                    )
            if not node.name.startswith("_") and ast.get_docstring(node) is None:
                found.append(
                    _finding(node.lineno, "low", "missing-docstring", f"public `{node.name}` has no docstring")
                )
        elif (
            isinstance(node, ast.Compare)
            and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops)
            and any(isinstance(c, ast.Constant) and c.value is None for c in node.comparators)
        ):
            found.append(_finding(node.lineno, "low", "compare-to-none", "compare with `is None`, not `== None`"))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                name = (alias.asname or alias.name).split(".")[0]
                if name != "*" and name not in used:
                    found.append(_finding(node.lineno, "medium", "unused-import", f"`{name}` is imported but not used"))
    return sorted(found, key=lambda f: (_SEVERITY[f["severity"]], f["line"], f["rule"]))


def workspace_tools(root: str | Path) -> list[LocalTool]:
    """`read_file(path)` and `check_python(path)` over files under `root`, refusing paths outside it (notebook 06)."""
    folder = Path(root).resolve()

    def locate(arguments: dict[str, Any]) -> Path:
        path = str(arguments.get("path", ""))
        target = (folder / path).resolve()
        if not path or Path(path).is_absolute() or not target.is_relative_to(folder):
            raise ValueError(f"refused {path!r}: give a relative path inside the workspace")
        if not target.is_file() or target.stat().st_size > _MAX_BYTES:
            raise ValueError(f"there is no readable file {path!r} (at most {_MAX_BYTES} bytes) in the workspace")
        return target

    async def read_file(arguments: dict[str, Any]) -> LocalToolResult:
        try:
            text = locate(arguments).read_text(encoding="utf-8")
        except (OSError, ValueError) as error:
            return LocalToolResult(f"Error: {error}", is_error=True)
        return LocalToolResult(json.dumps({"path": arguments["path"], "lines": len(text.splitlines()), "text": text}))

    async def check_python(arguments: dict[str, Any]) -> LocalToolResult:
        try:
            findings = check_python_source(locate(arguments).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            return LocalToolResult(f"Error: {error}", is_error=True)
        summary = "; ".join(f"line {f['line']} {f['severity']} {f['rule']}" for f in findings) or "no findings"
        return LocalToolResult(
            json.dumps({"path": arguments["path"], "count": len(findings), "summary": summary, "findings": findings})
        )

    schema = {"type": "object", "properties": {"path": _PATH}, "required": ["path"]}
    return [
        LocalTool(
            Tool(
                name="read_file",
                description=(
                    "Read a text file of the workspace. Use it to see code before reviewing it. Read-only. "
                    "Returns JSON with path, lines and text."
                ),
                input_schema=schema,
                annotations=_READ_ONLY,
            ),
            read_file,
        ),
        LocalTool(
            Tool(
                name="check_python",
                description=(
                    "Run a static check on a Python file of the workspace: syntax, bare except, mutable defaults, "
                    "== None, unused imports, missing docstrings. Read-only. Returns JSON with count, summary and "
                    "findings (line, severity, rule, message), most severe first."
                ),
                input_schema=schema,
                annotations=_READ_ONLY,
            ),
            check_python,
        ),
    ]


def _finding(line: int, severity: str, rule: str, message: str) -> dict[str, Any]:
    return {"line": line, "severity": severity, "rule": rule, "message": message}
