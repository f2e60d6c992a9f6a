"""The audit log: one line per call the model proposed, whatever became of it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AuditEntry", "AuditLog", "argument_hash"]


def argument_hash(arguments: Any) -> str:
    """A short, stable fingerprint of a call's arguments (canonical JSON, SHA-256) (notebook 03)."""
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


@dataclass(frozen=True)
class AuditEntry:
    """Who was asked to do what, what the host decided, how long it took and how it ended (notebook 03)."""

    round: int
    server: str
    tool: str
    args_hash: str
    decision: str
    outcome: str
    latency_ms: float | None = None


class AuditLog:
    """Append-only list of audit entries, shown as a table (notebook 03)."""

    def __init__(self) -> None:
        self.entries: list[AuditEntry] = []

    def add(self, entry: AuditEntry) -> AuditEntry:
        self.entries.append(entry)
        return entry

    def __len__(self) -> int:
        return len(self.entries)

    def table(self, *, latency: bool = False) -> pd.DataFrame:
        """The entries as a DataFrame; latency is left out by default because it varies run to run."""
        import pandas as pd

        rows = [asdict(e) for e in self.entries]
        columns = ["round", "server", "tool", "args_hash", "decision", "outcome"] + (["latency_ms"] if latency else [])
        return pd.DataFrame(rows, columns=columns)
