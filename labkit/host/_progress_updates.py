"""A progress callback that keeps what a server reported, for a call the host wants to follow (notebook 10)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ProgressUpdates"]


@dataclass
class ProgressUpdates:
    """Pass as `call_tool(..., progress_callback=updates)`: the client then sends a `progressToken` (notebook 10).

    Each `notifications/progress` the server sends for that call is kept as (progress, total, message).
    """

    updates: list[tuple[float, float | None, str | None]] = field(default_factory=list)

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.updates.append((progress, total, message))

    def so_far(self) -> str:
        """For a call given up on: the last report, said to the model (" It had reported 2 of 4."), or ""."""
        if not self.updates:
            return ""
        done, total, _message = self.updates[-1]
        return f" It had reported progress {done:g}" + (f" of {total:g}." if total is not None else ".")
