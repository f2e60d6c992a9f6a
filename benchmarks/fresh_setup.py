"""Figure 5 (`--setup`): from a clean clone to the first trace — clone, venv, pip install, `labkit run canonical`."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .environment import REPO_ROOT

__all__ = ["measure_fresh_setup"]

_STEP_TIMEOUT = 1200


def measure_fresh_setup(source: Path = REPO_ROOT) -> dict[str, Any]:
    """Time each step a learner types after cloning; report the pip cache as it was before installing."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-setup-"))
    clone, python = scratch / "lab", scratch / "lab" / ".venv" / "bin" / "python"
    env = {**os.environ, "LABKIT_DATA_DIR": str(scratch / "data")}
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "LABKIT_EVENTS_FILE", "LABKIT_MODEL"):
        env.pop(name, None)
    result: dict[str, Any] = {
        "commit": _git(source, "rev-parse", "--short", "HEAD"),
        "not_in_clone": _uncommitted(source),
        "pip_cache_before": _pip_cache(env),
        "steps": [],
    }
    steps = [
        ("git clone", [shutil.which("git") or "git", "clone", "--quiet", str(source), str(clone)], scratch),
        ("python -m venv", [sys.executable, "-m", "venv", str(clone / ".venv")], clone),
        ("pip install -r requirements.txt", [str(python), "-m", "pip", "install", "-r", "requirements.txt"], clone),
        ("pip install --no-deps -e .", [str(python), "-m", "pip", "install", "--no-deps", "-e", "."], clone),
        ("python -m labkit run canonical", [str(python), "-m", "labkit", "run", "canonical"], clone),
    ]
    try:
        for label, command, cwd in steps:
            row, output = _step(label, command, cwd, env)
            result["steps"].append(row)
            if label.startswith("pip install -r"):
                result["pip_sources"] = _pip_sources(output)
            if not row["ok"]:
                break
    finally:
        result["pip_cache_after"] = _pip_cache(env)
        cleaning = time.monotonic()
        shutil.rmtree(scratch, ignore_errors=True)
        result["cleanup_s"] = round(time.monotonic() - cleaning, 1)  # not part of the total
    result["total_s"] = round(sum(row["seconds"] for row in result["steps"]), 1)
    result["ok"] = len(result["steps"]) == len(steps) and all(row["ok"] for row in result["steps"])
    return result


def _step(label: str, command: list[str], cwd: Path, env: dict[str, str]) -> tuple[dict[str, Any], str]:
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=_STEP_TIMEOUT)
        ok, output = done.returncode == 0, done.stdout + done.stderr
    except subprocess.TimeoutExpired as expired:
        ok, output = False, f"timed out after {_STEP_TIMEOUT} s: {expired}"
    row: dict[str, Any] = {"step": label, "seconds": round(time.monotonic() - started, 1), "ok": ok}
    if not ok:
        row["output_tail"] = output.strip().splitlines()[-8:]
    return row, output


def _pip_sources(output: str) -> dict[str, int]:
    """Where pip took each distribution from, counted from its log lines."""
    return {
        "from_cache": len(re.findall(r"^\s*Using cached ", output, re.M)),
        "downloaded": len(re.findall(r"^\s*Downloading ", output, re.M)),
        "local_files": len(re.findall(r"^\s*Processing /", output, re.M)),
        "already_satisfied": len(re.findall(r"^Requirement already satisfied", output, re.M)),
    }


def _pip_cache(env: dict[str, str]) -> dict[str, Any]:
    pip = [sys.executable, "-m", "pip"]
    folder = subprocess.run([*pip, "cache", "dir"], capture_output=True, text=True, env=env).stdout.strip()
    wheels = subprocess.run([*pip, "cache", "list", "--format=abspath"], capture_output=True, text=True, env=env)
    exists = bool(folder) and Path(folder).is_dir()
    size = sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) if exists else 0
    config = subprocess.run([*pip, "config", "list"], capture_output=True, text=True, env=env).stdout.split("\n")
    return {
        "dir": folder or None,
        "exists": exists,
        "size_mib": round(size / 2**20, 1),
        "wheels_built_locally": len(wheels.stdout.split()),
        "pip_config": [line for line in config if line.strip()],  # indexes, find-links, no-cache-dir ...
    }


def _git(repo: Path, *args: str) -> str | None:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else None


def _uncommitted(repo: Path) -> dict[str, int]:
    """Working-tree files a clone does not get: untracked and modified (a clone has HEAD only)."""
    status = _git(repo, "status", "--porcelain") or ""
    lines = status.splitlines()
    return {
        "untracked": sum(line.startswith("??") for line in lines),
        "modified": sum(not line.startswith("??") for line in lines),
    }
