"""The words the code speaks: one base class for the lab's own errors; exercises found by key, never a KeyError."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

import labkit
from labkit.errors import AuthError, ConfigError, LabError

LABKIT = Path(labkit.__file__).parent


def _modules() -> list[str]:
    return [m.name for m in pkgutil.walk_packages(labkit.__path__, "labkit.") if m.name != "labkit.__main__"]


def test_every_error_class_the_lab_defines_is_a_lab_error() -> None:
    outside = []
    for name in _modules():
        module = importlib.import_module(name)
        for cls in vars(module).values():
            defined_here = inspect.isclass(cls) and cls.__module__ == name
            if defined_here and issubclass(cls, BaseException) and not issubclass(cls, LabError):
                outside.append(f"{name}.{cls.__qualname__}")
    assert outside == []
    assert len(LabError.__subclasses__()) >= 5, "start, too large, config, auth, skill (at least)"


def test_a_lab_error_is_still_the_built_in_it_refines() -> None:
    from labkit.host import ServerMessageTooLarge, ServerStartError
    from labkit.skills import SkillError

    assert issubclass(ServerStartError, RuntimeError) and issubclass(ServerMessageTooLarge, RuntimeError)
    assert issubclass(ConfigError, ValueError) and issubclass(SkillError, ValueError)
    assert issubclass(AuthError, LabError) and not issubclass(AuthError, ValueError)


def test_the_errors_module_stands_on_the_standard_library_alone() -> None:
    tree = ast.parse((LABKIT / "errors.py").read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }
    assert imported <= {"__future__"}


def test_an_unknown_exercise_gets_a_verdict_naming_the_exercises_not_a_key_error() -> None:
    verdict = labkit.check("99.9", "an answer")
    assert not verdict and "'99.9'" in verdict.message and "01.1" in verdict.message


def test_every_check_a_notebook_calls_is_an_exercise_of_the_lab() -> None:
    from labkit.lessons.checks import EXERCISES

    called = set()
    for notebook in (LABKIT.parent / "notebooks").glob("*.ipynb"):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            called.update(re.findall(r"labkit\.check\(\"(\d\d\.\d+)\"", "".join(cell["source"])))
    assert called and called <= set(EXERCISES)
