"""Shared pieces of the kernel tests: a cell run in a real kernel, and every wait by the lab's one deadline rule."""

from __future__ import annotations

import queue
from collections.abc import Callable
from typing import Any

from labkit._time_limits import scaled
from labkit.processes import Deadline

LIMIT = 60
"""Each wait's limit on a quiet machine: scaled by `LABKIT_TIME_SCALE`, and moved on while the processes waited for
a CPU (`Deadline`), as every limit of the lab."""
_LOOK_S = 0.2


def until(done: Callable[[float], bool], tree: int | tuple[int, ...] | None, what: str) -> None:
    """Until `done(look)` says so (it may wait up to `look` seconds for it) within `LIMIT`, moved on while the
    processes of `tree` (None: all of this process's) wait for a CPU; past it, the assertion names `what` and why."""
    deadline = Deadline(scaled(LIMIT), tree=tree)
    while not done(_LOOK_S):
        assert not deadline.passed(), f"{what}: not within {deadline.limit:g} s. {deadline.busy_note()}"


def run_cell(manager: Any, client: Any, code: str, on_message: Callable[[dict[str, Any]], None]) -> dict:
    """Run `code` in the kernel of `manager`, give each IOPub message it causes to `on_message`, and return its
    shell reply; waited for while the kernel works (`until`)."""
    asked = client.execute(code)

    def ran(look: float) -> bool:
        try:
            message = client.get_iopub_msg(timeout=look)
        except queue.Empty:
            return False
        if message["parent_header"].get("msg_id") != asked:
            return False
        on_message(message)
        return message["msg_type"] == "status" and message["content"]["execution_state"] == "idle"

    until(ran, manager.provisioner.pid, "the cell's run")
    return shell_reply(manager, client, asked)


def shell_reply(manager: Any, client: Any, asked: str) -> dict:
    """The kernel's reply to request `asked`, waited for while the kernel works (`until`)."""
    replies: list[dict] = []

    def replied(look: float) -> bool:
        try:
            message = client.get_shell_msg(timeout=look)
        except queue.Empty:
            return False
        if message["parent_header"].get("msg_id") == asked:
            replies.append(message)
        return bool(replies)

    until(replied, manager.provisioner.pid, "the kernel's reply")
    return replies[0]


def printed(manager: Any, client: Any, code: str) -> str:
    """What `code` printed in the kernel of `manager`, once it ran without an error."""
    lines: list[str] = []

    def kept(message: dict[str, Any]) -> None:
        if message["msg_type"] == "stream":
            lines.append(message["content"]["text"])

    reply = run_cell(manager, client, code, kept)
    assert reply["content"]["status"] == "ok", reply["content"]
    return "".join(lines)
