"""Peak memory of this process plus every process it started (servers, kernels), sampled by a thread."""

from __future__ import annotations

import threading
from types import TracebackType

from classroom.memory import tree_memory

__all__ = ["PeakRSS"]


class PeakRSS:
    """`with PeakRSS() as peak: ...` then `peak.as_dict()`: the highest summed RSS seen every `interval` s.

    RSS counts shared pages (Python's own libraries, a warm Python's imports) once per process, so the total
    overstates what the machine needs; it is the figure `ps` and `top` show. PSS is the memory really used.
    """

    def __init__(self, interval: float = 0.02) -> None:
        self.interval = interval
        self.peak_total = self.peak_self = self.peak_children = self.peak_pss = 0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="peak-rss", daemon=True)

    def __enter__(self) -> PeakRSS:
        self._sample()
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self) -> None:
        own, children, pss = tree_memory()
        self.samples += 1
        self.peak_pss = max(self.peak_pss, pss)
        self.peak_self = max(self.peak_self, own)
        self.peak_children = max(self.peak_children, children)
        self.peak_total = max(self.peak_total, own + children)

    def as_dict(self) -> dict[str, float]:
        mib = 1024 * 1024
        return {
            "peak_total_mib": round(self.peak_total / mib, 1),
            "peak_process_mib": round(self.peak_self / mib, 1),
            "peak_children_mib": round(self.peak_children / mib, 1),
            "peak_pss_mib": round(self.peak_pss / mib, 1),
            "samples": self.samples,
        }
