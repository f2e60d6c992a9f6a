"""The wings, proven from the code: what each wing imports, and what importing the host loads."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LABKIT = ROOT / "labkit"
# Which wings each wing may import (besides itself); the facade `labkit/__init__.py` may import any.
ALLOWED = {
    "trace": set(),
    "processes": set(),
    "host": {"trace", "processes"},
    "security": {"trace", "host", "processes"},
    "skills": {"trace", "host", "processes"},
    "simulator": {"trace"},
    "lessons": {"trace", "processes", "host", "security", "skills", "simulator"},
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, relative imports resolved, at any depth (late imports included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path) if path.name == "__init__.py" else _module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _wing(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "labkit" and parts[1] in ALLOWED else None


SOURCES = sorted(LABKIT.rglob("*.py"))


def test_no_wing_imports_a_wing_above_it() -> None:
    upward = []
    for path in SOURCES:
        wing = _wing(_module_name(path))
        if wing is None:
            continue
        for module in _imports(path):
            other = _wing(module)
            if other is not None and other != wing and other not in ALLOWED[wing]:
                upward.append(f"{path.relative_to(ROOT)} imports {module}")
    assert upward == []


def test_benchmarks_import_no_tests_and_the_fault_replays_they_share_import_neither() -> None:
    crossing = [
        f"{path.relative_to(ROOT)} imports {module}"
        for mine, theirs in (("benchmarks", "tests"), ("replays", "tests"), ("replays", "benchmarks"))
        for path in sorted((ROOT / mine).rglob("*.py"))
        for module in _imports(path)
        if module == theirs or module.startswith(f"{theirs}.")
    ]
    assert crossing == []


def test_only_the_lessons_know_the_lab_servers() -> None:
    leaks = [
        f"{p.relative_to(ROOT)} imports {m}"
        for p in SOURCES
        for m in _imports(p)
        if (m == "servers" or m.startswith("servers.")) and _wing(_module_name(p)) != "lessons"
    ]
    assert leaks == []


def test_nothing_under_labkit_reads_the_tests_folder() -> None:
    readers = [
        str(p.relative_to(ROOT))
        for p in SOURCES
        if any(
            isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in ("tests", "tests/")
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
        )
    ]
    assert readers == []


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; import json; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(json.loads(result.stdout))


def test_importing_the_host_loads_neither_the_simulator_nor_a_provider_sdk() -> None:
    loaded = _loaded_after("import labkit.host")
    assert {"labkit.simulator", "anthropic", "openai"} & loaded == set()
    assert not any(m.startswith("servers") for m in loaded)


def test_a_provider_sdk_imported_meanwhile_is_imported_on_a_thread_of_its_own_and_only_once() -> None:
    code = (
        "import sys, threading; from labkit.host import import_sdk_meanwhile; "
        "import_sdk_meanwhile('openai'); started = [t for t in threading.enumerate() if t.name == 'import openai']; "
        "[t.join() for t in started]; import_sdk_meanwhile('openai'); "
        "again = [t for t in threading.enumerate() if t.name == 'import openai']; "
        "print(len(started), 'openai' in sys.modules, len(again))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.split() == ["1", "True", "0"]


def test_importing_labkit_loads_no_wing_until_a_name_is_used() -> None:
    loaded = _loaded_after("import labkit")
    assert not any(m.startswith("labkit.") for m in loaded)
    assert "labkit.trace" in _loaded_after("import labkit; labkit.Trace")


@pytest.mark.parametrize("wing", sorted(ALLOWED))
def test_a_name_the_top_level_lists_is_its_wing_s_own_object(wing: str) -> None:
    import importlib

    import labkit

    facade = importlib.import_module(f"labkit.{wing}")
    listed = sorted(set(facade.__all__) & set(labkit.__all__))
    assert [name for name in listed if getattr(labkit, name) is not getattr(facade, name)] == []


def test_notebooks_import_only_from_facades() -> None:
    offending = []
    for path in sorted(p for folder in ("notebooks", "solutions", "zh-CN") for p in (ROOT / folder).rglob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            for module in _imports_of_source("".join(cell["source"])):
                if (
                    module.startswith("labkit.") and any(p.startswith("_") for p in module.split("."))
                ) or module.startswith("servers._"):
                    offending.append(f"{path.relative_to(ROOT)}: {module}")
    assert offending == []


def _imports_of_source(source: str) -> set[str]:
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return set()
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    }


def test_a_process_that_imported_labkit_freezes_its_heap_before_finalizing() -> None:
    code = "import atexit, gc; atexit.register(lambda: print(gc.get_freeze_count() > 0)); import labkit"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.split() == ["True"]


def test_the_warm_pythons_package_imports_only_the_standard_library() -> None:
    # The supervisor loads its client by path at every server start, and a warm Python imports nothing of ours ahead.
    foreign = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted((LABKIT / "_warm").glob("*.py"))
        for module in _imports(path)
        if not module.startswith("labkit._warm")
        and module.partition(".")[0] not in sys.stdlib_module_names | {"__future__"}
    ]
    assert foreign == []


def test_the_kernel_provisioner_loads_neither_the_host_nor_the_sdk() -> None:
    # Jupyter loads it at a kernel's launch: the host and the SDK would cost that launch a second of imports.
    loaded = _loaded_after("import labkit._warm_kernels")
    assert [m for m in loaded if m == "mcp" or m.startswith(("mcp.", "labkit.host", "labkit.lessons"))] == []


CONTRACT = "labkit.server_contract"


def test_the_lab_servers_import_nothing_of_labkit_but_the_environment_contract() -> None:
    """A server speaks the learner's language through `servers/i18n.py`, which stands on the standard library, and
    reads the host's variables by the names `labkit/server_contract.py` gives them."""
    importers = [
        f"{p.relative_to(ROOT)} imports {m}"
        for p in sorted((ROOT / "servers").rglob("*.py"))
        for m in _imports(p)
        if (m == "labkit" or m.startswith("labkit.")) and not (m == CONTRACT or m.startswith(f"{CONTRACT}."))
    ]
    assert importers == []


def test_the_environment_contract_loads_nothing_of_labkit_and_only_the_standard_library() -> None:
    assert {m for m in _loaded_after(f"import {CONTRACT}") if m.startswith("labkit")} == {"labkit", CONTRACT}
    foreign = [m for m in _imports(LABKIT / "server_contract.py") if m.partition(".")[0] not in sys.stdlib_module_names]
    assert foreign == []


def test_each_contract_variable_is_spelled_in_the_contract_alone() -> None:
    import labkit.server_contract as contract

    names = {getattr(contract, name) for name in contract.__all__}
    spelled = [
        f"{path.relative_to(ROOT)}: {node.value!r}"
        for path in sorted([*SOURCES, *(ROOT / "servers").rglob("*.py")])
        if path != LABKIT / "server_contract.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value in names
    ]
    assert spelled == []
