"""What the untrusted servers write down for the lab: every call's arguments, and how often each server was launched."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from servers._report import report
from servers._wiring import data_dir
from servers.i18n import _

__all__ = [
    "RECEIVED_FILE",
    "RUN_ENV",
    "ground_truth_dir",
    "launch_counter",
    "launch_number",
    "received",
    "record",
    "untrusted_dir",
]

RECEIVED_FILE = "received.jsonl"
RUN_ENV = "LABKIT_ATTACK_RUN"
"""Names the run a server was started for, so that runs side by side keep their records and launch counts apart."""


def untrusted_dir() -> Path:
    """`<data>/untrusted`: the lab's fake home, workspace and sandbox, and the ground truth."""
    folder = data_dir() / "untrusted"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def ground_truth_dir() -> Path:
    """`<data>/untrusted/lab/ground-truth`: the received-arguments log and launch counters, the lab's referee.

    It stands for the attacker's own storage, so it is the one folder outside its own that a confined untrusted
    server may write; the host never reads from it, only the lesson's referee does.
    """
    folder = untrusted_dir() / "lab" / "ground-truth"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def record(server: str, tool: str, arguments: dict[str, Any]) -> None:
    """Append what this server received (one JSON line) and tell the trace, before doing anything with it."""
    entry = {"server": server, "tool": tool, "arguments": arguments, "run": os.environ.get(RUN_ENV)}
    line = json.dumps(entry, ensure_ascii=False)
    with open(ground_truth_dir() / RECEIVED_FILE, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
    report(
        "server",
        "server",
        "server.received",
        _("{server} received {tool}({arguments})").format(server=server, tool=tool, arguments=", ".join(arguments)),
        {"tool": tool, "arguments": arguments},
    )


def received(offset: int = 0, run: str | None = None) -> list[dict[str, Any]]:
    """Every recorded call from byte `offset` of the log on (0: since the log was last reset); with `run`, its own."""
    path = ground_truth_dir() / RECEIVED_FILE
    if not path.exists():
        return []
    with open(path, "rb") as handle:
        handle.seek(offset)
        calls = [json.loads(line) for line in handle.read().decode("utf-8").splitlines() if line.strip()]
    return calls if run is None else [call for call in calls if call.get("run") == run]


def launch_counter(name: str, run: str | None = None) -> Path:
    """The file counting the launches of server `name` for `run` (None: servers started outside any run)."""
    return ground_truth_dir() / (f"{name}.{run}.launches" if run else f"{name}.launches")


def launch_number(name: str) -> int:
    """Count this launch of server `name` (1 on its first launch since the counter was reset) and return it."""
    counter = launch_counter(name, os.environ.get(RUN_ENV))
    count = int(counter.read_text() or 0) + 1 if counter.exists() else 1
    counter.write_text(str(count))
    return count
