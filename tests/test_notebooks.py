"""The notebook conventions of CONTRIBUTING.md, checked by parsing every notebook and its solution."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS, SOLUTIONS = REPO / "notebooks", REPO / "solutions"
LESSONS = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
ALL = LESSONS + sorted(SOLUTIONS.glob("*.ipynb"))
_MAGIC = re.compile(r"^\s*[%!].*$", re.M)
# A cell that writes a Python file (notebook 08's own server) is a program the lesson builds, not a kernel helper.
_WRITES_A_SERVER = re.compile(r"%%writefile [\w-]+\.py\n")


def _read(path: Path) -> nbformat.NotebookNode:
    return nbformat.read(path, as_version=4)


def _tags(cell) -> set[str]:
    return set(cell.metadata.get("tags", []))


def test_there_are_lessons_and_each_has_a_solution():
    assert LESSONS, "no notebooks found"
    for lesson in LESSONS:
        assert (SOLUTIONS / lesson.name).exists(), f"{lesson.name} has no solution"


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(REPO)))
def test_no_helpers_are_defined_outside_exercise_cells(path):
    for index, cell in enumerate(_read(path).cells):
        if cell.cell_type != "code" or "exercise" in _tags(cell) or _WRITES_A_SERVER.match(cell.source):
            continue
        tree = ast.parse(_MAGIC.sub("", cell.source))
        defined = [
            type(n).__name__
            for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
        ]
        assert not defined, f"{path.name} cell {index} defines {defined}: helpers belong in labkit"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_the_solution_differs_only_in_exercise_cells(path):
    lesson, solution = _read(path).cells, _read(SOLUTIONS / path.name).cells
    assert len(lesson) == len(solution), "the solution must have the same cells"
    exercises = 0
    for index, (mine, theirs) in enumerate(zip(lesson, solution, strict=False)):
        assert _tags(mine) == _tags(theirs), f"cell {index}: tags differ"
        if "exercise" in _tags(mine):
            exercises += 1
            assert "TODO" in mine.source, f"cell {index}: an exercise starts as TODO in the learner's notebook"
            assert mine.source != theirs.source, f"cell {index}: the solution does not answer the exercise"
        else:
            assert mine.source == theirs.source, f"cell {index} differs but is not tagged exercise"
    assert exercises >= 3, f"{path.name} has {exercises} exercises; at least 3 are required"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_each_lesson_has_the_required_sections(path):
    cells = _read(path).cells
    headings = [
        line for c in cells if c.cell_type == "markdown" for line in c.source.splitlines() if line.startswith("#")
    ]
    assert re.match(rf"# {path.name[:2]} · ", headings[0]), "first heading is '# NN · Title'"
    for section in ("## Exercises", "## Summary", "## Going further"):
        assert any(h.startswith(section) for h in headings), f"missing {section}"
    setups = [c for c in cells if "setup" in _tags(c)]
    assert len(setups) == 1 and "import labkit" in setups[0].source
    assert sum("<summary>Hint" in c.source for c in cells if c.cell_type == "markdown") >= 3


@pytest.mark.parametrize("path", ALL, ids=lambda p: str(p.relative_to(REPO)))
def test_notebooks_are_committed_executed_stripped_and_small(path):
    notebook = _read(path)
    code = [c for c in notebook.cells if c.cell_type == "code" and "nbval-skip" not in _tags(c)]
    assert all(c.execution_count is not None for c in code), "commit notebooks executed (tools/notebooks.py)"
    assert "widgets" not in notebook.metadata
    assert all(set(c.metadata) <= {"tags"} for c in notebook.cells), "strip cell metadata"
    assert path.stat().st_size < 400 * 1024
