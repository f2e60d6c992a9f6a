"""labkit: the teaching lab's toolkit — record a run of an agent using MCP tools, and show it.

Four wings, lowest first: `labkit.trace` (events and the views drawn from them), `labkit.host`
(servers, the model loop and every decision; with `labkit.security` and `labkit.skills` as its
features), `labkit.simulator` (the simulated teaching model) and `labkit.lessons` (the lab's
scenarios, attacks and exercise checks). Every public name of a wing is also here, imported on
first use, so `import labkit` stays light.
"""

from __future__ import annotations

import atexit
import gc
import importlib
from typing import Any

# Finalization runs full collections over everything still alive: with the SDKs, pandas and matplotlib
# loaded (~330k objects) that took 1.2-1.3 s at every kernel shutdown and CLI exit, for memory the OS
# takes back anyway. Frozen objects are skipped; Python promises no __del__ at exit for what is still
# alive, and atexit and weakref.finalize callbacks still run.
atexit.register(gc.freeze)

_WINGS = ("trace", "host", "security", "skills", "simulator", "lessons")


def __getattr__(name: str) -> Any:
    for wing in _WINGS:
        module = importlib.import_module(f"{__name__}.{wing}")
        if name in module.__all__:
            value = getattr(module, name)
            globals()[name] = value
            return value
    raise AttributeError(f"module 'labkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *(n for w in _WINGS for n in importlib.import_module(f"{__name__}.{w}").__all__)})
