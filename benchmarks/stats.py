"""Small statistics for benchmarks: medians, percentiles, and side-by-side timing of two or more callables."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

__all__ = ["Comparison", "compare", "median_ms", "percentile", "time_interleaved"]

Probe = Callable[[], Awaitable[object]]


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) by linear interpolation between closest ranks."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median_ms(seconds: Sequence[float]) -> float:
    return statistics.median(seconds) * 1000 if seconds else float("nan")


async def time_interleaved(probes: Sequence[Probe], samples: int, warmup: int) -> list[list[float]]:
    """Call every probe `warmup` times, then `samples` times each, in rotating order; seconds per call.

    Round k starts with probe k mod n, so no probe always goes first, and slow drift on a shared
    machine (another job starting, CPU frequency) lands on every probe alike.
    """
    for _ in range(warmup):
        for probe in probes:
            await probe()
    timings: list[list[float]] = [[] for _ in probes]
    for k in range(samples):
        for offset in range(len(probes)):
            index = (k + offset) % len(probes)
            started = time.perf_counter()
            await probes[index]()
            timings[index].append(time.perf_counter() - started)
    return timings


@dataclass(frozen=True)
class Comparison:
    """Two medians measured side by side: the subject against its baseline."""

    baseline_ms: float
    subject_ms: float
    samples: int

    @property
    def ratio(self) -> float:
        return self.subject_ms / self.baseline_ms

    @property
    def extra_ms(self) -> float:
        """The per-call constant the subject adds."""
        return self.subject_ms - self.baseline_ms

    def as_dict(self) -> dict[str, float]:
        return {
            "baseline_ms": round(self.baseline_ms, 4),
            "subject_ms": round(self.subject_ms, 4),
            "ratio": round(self.ratio, 4),
            "extra_ms": round(self.extra_ms, 4),
            "samples": self.samples,
        }


def compare(baseline: Sequence[float], subject: Sequence[float]) -> Comparison:
    return Comparison(median_ms(baseline), median_ms(subject), min(len(baseline), len(subject)))
