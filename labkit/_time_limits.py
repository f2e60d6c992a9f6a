"""Every time limit of the lab, scaled by one setting for a slow or shared machine (standard library only).

`LABKIT_TIME_SCALE=3` gives every limit three times as long: the host's start-up and call limits, the warm
Python's readiness, the HTTP servers' ports, and CI's own waits (`.ci/*.sh` run `python3 labkit/_time_limits.py 45` to
get their seconds). Nothing else reads the variable.
"""

from __future__ import annotations

import math
import os
import sys

if not __package__:  # run as a script (`python3 labkit/_time_limits.py 45`, by CI): its package is the folder above
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from labkit.errors import ConfigError

__all__ = ["SCALES", "TIME_SCALE_ENV", "machine_load", "scaled", "time_scale"]

TIME_SCALE_ENV = "LABKIT_TIME_SCALE"
"""A number (default 1) multiplying every time limit: 2 on a classroom VM shared by many, 4 on a Binder CPU share."""


SCALES = (0.1, 100.0)
"""The factors `LABKIT_TIME_SCALE` may name: below, a limit is shorter than a server's start on any machine; above, a
hung call would be waited for over half an hour (and the furthest a limit moves, ten times that), as good as never."""


def time_scale() -> float:
    """The factor `LABKIT_TIME_SCALE` names (notebook 05); 1 when unset, and a clear error when it is not a number
    within `SCALES`."""
    text = os.environ.get(TIME_SCALE_ENV, "").strip()
    if not text:
        return 1.0
    try:
        scale = float(text)
    except ValueError:
        scale = math.nan
    least, most = SCALES
    if not least <= scale <= most:
        raise ConfigError(
            f"{TIME_SCALE_ENV}={text!r}: give a number from {least:g} to {most:g}, e.g. {TIME_SCALE_ENV}=3 on a "
            "busy machine"
        )
    return scale


def scaled(seconds: float) -> float:
    """`seconds`, the limit on a quiet machine, times `LABKIT_TIME_SCALE` (notebook 05)."""
    return seconds * time_scale()


def machine_load() -> tuple[float, int]:
    """The 1-minute load average and the number of CPUs it is spread over (the machine's: it counts every process)."""
    cpus = os.cpu_count() or 1
    try:
        return os.getloadavg()[0], cpus
    except OSError:
        return 0.0, cpus


if __name__ == "__main__":
    # `python -m labkit._time_limits SECONDS...`: each scaled, as a whole number, one a line (for CI's shell scripts).
    for argument in sys.argv[1:]:
        print(round(scaled(float(argument))))  # noqa: T201 - CI's scripts read it
