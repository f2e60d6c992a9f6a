"""nbval for a lesson and its solution in one kernel: the solution's exercises run after the lesson, checked against
the solution's own outputs, so the lesson's cells are not executed twice (`pytest -p tests.nbval_pairs --nbval-pairs`).

A solution notebook is its lesson with the exercises answered: every cell before its first `exercise` cell is the
lesson's, source and committed outputs alike (`SameAsLesson` asserts it). So the lesson's run checks those cells for
both; then the solution's cells from its first exercise on run in the same kernel, after the lesson's own cells from
there (its exercises unanswered, `answer = TODO`), and are compared with the solution's committed outputs.
A solution collected without its lesson (`pytest ... --nbval-pairs solutions/03_nineteen_steps.ipynb`) runs whole,
as plain nbval runs it; so does a lesson without its solution.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbval.plugin import IPyNbCell, IPyNbFile, find_comment_markers, find_metadata_tags

_LESSONS, _SOLUTIONS = "notebooks", "solutions"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("nbval").addoption(
        "--nbval-pairs",
        action="store_true",
        help="as --nbval, but a solution collected with its lesson runs its exercises in the lesson's kernel",
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not parent.config.option.nbval_pairs or file_path.suffix != ".ipynb":
        return None
    partner = _partner(file_path)
    paired = partner.exists() and _collected(partner, parent.config)
    if file_path.parent.name == _SOLUTIONS and paired:
        return SameAsLesson.from_parent(parent, path=file_path)
    if file_path.parent.name == _LESSONS and paired:
        return LessonWithSolution.from_parent(parent, path=file_path)
    return IPyNbFile.from_parent(parent, path=file_path)


def _partner(path: Path) -> Path:
    """`notebooks/N.ipynb` ↔ `solutions/N.ipynb`, in the same edition (English, or `zh-CN/`)."""
    other = {_LESSONS: _SOLUTIONS, _SOLUTIONS: _LESSONS}.get(path.parent.name)
    return path.parent.with_name(other) / path.name if other else path


def _collected(path: Path, config: pytest.Config) -> bool:
    """Whether `path` is one of this run's arguments or lies in one."""
    resolved = path.resolve()
    for argument in config.args:
        given = (config.invocation_params.dir / argument.split("::")[0]).resolve()
        if resolved == given or resolved.is_relative_to(given):
            return True
    return False


def _first_exercise(notebook: Any) -> int:
    """The index of the notebook's first cell tagged `exercise`: its answers start there (CONTRIBUTING.md)."""
    tagged = (i for i, cell in enumerate(notebook.cells) if "exercise" in cell.metadata.get("tags", []))
    return next(tagged, len(notebook.cells))


class SameAsLesson(pytest.File):
    """A solution collected with its lesson: one check that its cells before the first exercise are the lesson's."""

    def collect(self) -> Iterator[pytest.Item]:
        yield _PrefixCheck.from_parent(self, name="the cells before the first exercise are the lesson's")


class _PrefixCheck(pytest.Item):
    def runtest(self) -> None:
        solution = nbformat.read(self.path, as_version=4)
        lesson = nbformat.read(_partner(self.path), as_version=4)
        start = _first_exercise(solution)
        assert start < len(solution.cells), f"{self.path.name}: no cell is tagged exercise"
        assert len(lesson.cells) >= start, f"{self.path.name}: the lesson has fewer cells than its first exercise"
        for index, (ours, theirs) in enumerate(zip(solution.cells[:start], lesson.cells[:start], strict=True)):
            assert ours.source == theirs.source and ours.get("outputs") == theirs.get("outputs"), (
                f"cell {index} (before the first exercise) differs from the lesson's, source or committed outputs: "
                "re-execute both notebooks (tools/notebooks.py) so that the lesson's run checks it"
            )

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, 0, f"{self.path.name}: {self.name}"


class LessonWithSolution(IPyNbFile):
    """The lesson's cells, then its solution's cells from its first exercise on, in one kernel."""

    def collect(self) -> Iterator[pytest.Item]:
        yield from super().collect()
        path = _partner(self.path)
        solution = nbformat.read(path, as_version=4)
        start = _first_exercise(solution)
        number = sum(1 for cell in solution.cells[:start] if cell.cell_type == "code")
        for cell in solution.cells[start:]:
            if cell.cell_type != "code":
                continue
            # as nbval reads a cell's options: its tags, then its comment markers, else the run's default
            options = defaultdict(
                bool,
                {
                    "check": self.compare_outputs,
                    **dict(find_metadata_tags(cell.metadata)),
                    **dict(find_comment_markers(cell.source)),
                },
            )
            yield _SolutionCell.from_parent(
                self, name=f"{_SOLUTIONS} Cell {number}", cell_num=number, cell=cell, options=options, solution=path
            )
            number += 1


class _SolutionCell(IPyNbCell):
    def __init__(self, *args: Any, solution: Path, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.solution = solution

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.solution, 0, f"{self.solution.relative_to(self.config.rootpath)}::Cell {self.cell_num}"
