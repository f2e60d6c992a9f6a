"""Warm Pythons: a Python that imported modules once and forks every process it is asked for (standard library only).

The host starts one for the lab's servers (`labkit/processes/_warm.py`). Jupyter's provisioner
(`labkit/_warm_kernels.py`) starts two for each environment kernels are launched in: one forks the kernels, the other
is lent to their hosts for their servers, in place of one of their own.
"""

from ._client import LENT_ENV, Forked, Lent, fork, lent_to_us
from ._starter import SERVERS_FIRST, SERVERS_WHEN_IDLE, WARM_START_ENV, WarmPython, servers_env, warm_starts

__all__ = [
    "LENT_ENV",
    "SERVERS_FIRST",
    "SERVERS_WHEN_IDLE",
    "WARM_START_ENV",
    "Forked",
    "Lent",
    "WarmPython",
    "fork",
    "lent_to_us",
    "servers_env",
    "warm_starts",
]
