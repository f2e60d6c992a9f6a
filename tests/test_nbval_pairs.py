"""`tests/nbval_pairs.py`: a lesson and its solution checked in one kernel, each cell against its committed output."""

from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook, new_output

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]


def _cell(source: str, printed: str, *tags: str) -> nbformat.NotebookNode:
    cell = new_code_cell(source, execution_count=1, outputs=[new_output("stream", name="stdout", text=printed)])
    cell.metadata["tags"] = list(tags)
    return cell


def _write(folder: Path, name: str, cells: list[nbformat.NotebookNode]) -> None:
    folder.mkdir(exist_ok=True)
    nbformat.write(new_notebook(cells=cells), folder / name)


def _pair(root: Path, solution_first: str = "1\n", solution_answer: str = "42\n") -> None:
    shared = [_cell("counter = 1\nprint(counter)", "1\n")]
    _write(
        root / "notebooks",
        "01_pair.ipynb",
        [*shared, _cell("answer = None  # TODO\nprint(answer)", "None\n", "exercise")],
    )
    _write(
        root / "solutions",
        "01_pair.ipynb",
        [
            _cell(shared[0].source, solution_first),
            _cell("answer = 41 + counter\nprint(answer)", solution_answer, "exercise"),
        ],
    )


def _run(pytester: pytest.Pytester, *paths: str) -> pytest.RunResult:
    """pytest in a subprocess (which imports the plugin as `tests.nbval_pairs`: PYTHONPATH names the repo)."""
    return pytester.runpytest_subprocess(
        "-p", "tests.nbval_pairs", "--nbval-pairs", "--nbval-current-env", "-p", "no:cacheprovider", "-rA", *paths
    )


def test_a_solution_runs_its_exercises_in_its_lessons_kernel_and_its_earlier_cells_are_checked_not_run(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    _pair(pytester.path)
    result = _run(pytester, "notebooks", "solutions")
    result.assert_outcomes(passed=4)
    passed = [line for line in result.outlines if line.startswith("PASSED")]
    assert passed == [
        "PASSED notebooks/01_pair.ipynb::Cell 0",
        "PASSED notebooks/01_pair.ipynb::Cell 1",
        "PASSED notebooks/01_pair.ipynb::solutions Cell 1",  # `counter` comes from the lesson's cell 0
        "PASSED solutions/01_pair.ipynb::the cells before the first exercise are the lesson's",
    ]


def test_a_solution_whose_earlier_cells_drifted_or_whose_answer_is_wrong_fails_naming_each(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    _pair(pytester.path, solution_first="2\n", solution_answer="43\n")
    result = _run(pytester, "notebooks", "solutions")
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*cell 0 (before the first exercise) differs from the lesson's*"])
    result.stdout.fnmatch_lines(["FAILED notebooks/01_pair.ipynb::solutions Cell 1*"])


def test_a_solution_given_without_its_lesson_runs_whole(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    _pair(pytester.path)
    result = _run(pytester, "solutions/01_pair.ipynb")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["PASSED solutions/01_pair.ipynb::Cell 0", "PASSED solutions/01_pair.ipynb::Cell 1"])
