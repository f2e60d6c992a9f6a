"""What a server tells the lab's trace about its own work: the checks it made and the systems it asked."""

from __future__ import annotations

import json
import os
from typing import Any, Literal

from labkit.server_contract import EVENTS_FILE_ENV

__all__ = ["EVENTS_FILE_ENV", "ReportedKind", "report"]


# The kinds a server reports, spelled as the host's `labkit.trace.Kind` spells them (tests/test_vocabulary.py checks):
# servers stand on the SDK and the standard library, so they name the few they need here rather than import labkit.
ReportedKind = Literal["server.query", "server.render", "server.received", "system.answer"]


def report(
    src: Literal["server", "system"],
    dst: Literal["server", "system"],
    kind: ReportedKind,
    summary: str,
    payload: Any = None,
) -> None:
    """Append one event to `$LABKIT_EVENTS_FILE` (a JSON line), where the host's tap picks it up.

    The protocol carries only what the server returns; this side channel shows what happened
    inside the server before it answered. Without the variable set, it does nothing.
    """
    path = os.environ.get(EVENTS_FILE_ENV)
    if not path:
        return
    line = json.dumps({"src": src, "dst": dst, "kind": kind, "summary": summary, "payload": payload})
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")
