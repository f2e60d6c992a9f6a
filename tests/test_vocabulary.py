"""The words the code speaks: one base class for the lab's own errors; exercises found by key, never a KeyError."""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path
from typing import get_args

import pytest

import labkit
from labkit.errors import AuthError, ConfigError, LabError
from labkit.trace import Kind, Meta, Outcome
from servers._report import ReportedKind

LABKIT = Path(labkit.__file__).parent
ROOT = LABKIT.parent
_KINDS = {kind.value for kind in Kind}
_SPEAKERS = ("labkit", "benchmarks", "tools", "classroom")  # the code that may import labkit.trace
# The attack server forges other actors' events on purpose: its kinds are the forgery, not the lab's words.
_FORGER = "servers/attacks/forge.py"


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
    assert not labkit.check(["01.1"], "a key that is not a string, not even hashable")  # type: ignore[arg-type]


def test_the_checks_are_registered_by_listing_each_notebook_s_module() -> None:
    from labkit.lessons import checks

    on_disk = {f"{checks.__name__}.{info.name}" for info in pkgutil.iter_modules(checks.__path__)}
    assert {module.__name__ for module in checks.NOTEBOOKS} == on_disk
    assert {key.partition(".")[0] for key in checks.EXERCISES} == {name[-2:] for name in on_disk}


def test_every_check_a_notebook_calls_is_an_exercise_of_the_lab() -> None:
    from labkit.lessons.checks import EXERCISES

    called = set()
    for notebook in (LABKIT.parent / "notebooks").glob("*.ipynb"):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            called.update(re.findall(r"labkit\.check\(\"(\d\d\.\d+)\"", "".join(cell["source"])))
    assert called and called <= set(EXERCISES)


def _meta_key(node: ast.AST) -> ast.expr | None:
    """The key of `<x>.meta[key]`, `<x>.meta.get(key)` or `<x>.meta.pop(key)`."""
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "meta":
        return node.slice
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "pop")
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == "meta"
        and node.args
    ):
        return node.args[0]
    return None


def spelled_out(root: Path) -> list[str]:
    """Every kind, meta key read or recorded outcome that code under `root` writes as a string literal."""
    found = []
    for folder in _SPEAKERS:
        for path in sorted((root / folder).rglob("*.py")):
            if path == root / "labkit" / "trace" / "_kinds.py":
                continue
            where = path.relative_to(root).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                key = _meta_key(node)
                if isinstance(node, ast.Constant) and node.value in _KINDS:
                    found.append(f"{where}:{node.lineno} kind {node.value!r}")
                elif isinstance(key, ast.Constant) and key.value in set(Meta):
                    found.append(f"{where}:{key.lineno} meta key {key.value!r}")
                elif (
                    isinstance(node, ast.keyword) and node.arg == Meta.OUTCOME and isinstance(node.value, ast.Constant)
                ):
                    found.append(f"{where}:{node.value.lineno} outcome {node.value.value!r}")
    return found


def test_the_code_names_kinds_meta_keys_and_outcomes_by_their_constants() -> None:
    assert spelled_out(ROOT) == []


def test_a_server_spells_a_kind_only_where_the_type_checker_holds_it_to_the_trace_s_words() -> None:
    # Servers import no labkit (tests/test_layering.py): they name the kinds they report in `ReportedKind`, a
    # Literal mypy checks each `report(...)` against, and every one of those is a kind the trace declares.
    assert set(get_args(ReportedKind)) <= _KINDS
    loose = []
    for path in sorted((ROOT / "servers").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        reported = {
            id(node.args[2])
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "report"
        } | {
            id(constant)
            for node in tree.body
            if isinstance(node, ast.Assign) and [ast.unparse(target) for target in node.targets] == ["ReportedKind"]
            for constant in ast.walk(node.value)
        }
        where = path.relative_to(ROOT).as_posix()
        loose += [
            f"{where}:{node.lineno} {node.value!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in _KINDS and id(node) not in reported and where != _FORGER
        ]
    assert loose == []
    assert set(get_args(ReportedKind)) >= {Kind.SERVER_QUERY, Kind.SYSTEM_ANSWER}, "the logs server's two reports"


def test_a_recorded_kind_or_outcome_is_plain_data() -> None:
    from labkit.trace import Trace

    event = Trace().record("host", "host", Kind.HOST_GATE, "allows", outcome=Outcome.ALLOWED)
    assert type(event.kind) is str and type(event.meta[Meta.OUTCOME]) is str
    assert repr(event.kind) == "'host.gate'" and event.to_dict()["meta"] == {"outcome": "allowed"}


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("LABKIT_LANG", "fr_FR"),
        ("LABKIT_TIME_SCALE", "fast"),
        ("LABKIT_MODEL", "gemini"),
        ("LABKIT_MAX_RESULT_BYTES", "4MB"),
    ],
)
def test_a_setting_the_lab_cannot_use_is_a_config_error_naming_it(
    variable: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from labkit._i18n import language
    from labkit._time_limits import time_scale
    from labkit.host import select_model
    from labkit.processes import max_message_bytes

    monkeypatch.setenv(variable, value)
    read = {
        "LABKIT_LANG": language,
        "LABKIT_TIME_SCALE": time_scale,
        "LABKIT_MODEL": select_model,
        "LABKIT_MAX_RESULT_BYTES": max_message_bytes,
    }[variable]
    with pytest.raises(ConfigError, match=f"{variable}.*'{value}'"):
        read()
