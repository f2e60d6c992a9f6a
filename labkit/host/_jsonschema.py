"""jsonschema without its IRI grammar: loaded once, on a thread while a server starts, for the gate and the SDK."""

from __future__ import annotations

import importlib
import sys
import threading
from functools import cache
from types import ModuleType

__all__ = ["import_jsonschema_in_background", "jsonschema_module"]

# jsonschema's format module imports this optional package to check "iri" formats, and the package builds a
# grammar at import (seconds of CPU in every kernel). Nothing in the lab asserts formats (JSON Schema 2020-12
# treats `format` as an annotation unless a format checker is asked for), so the host loads jsonschema without it.
_IRI_GRAMMAR = "rfc3987_syntax"
_lock = threading.Lock()


def jsonschema_module() -> ModuleType:
    """The `jsonschema` package, imported once without format grammars nobody here uses (notebook 02)."""
    with _lock:
        if "jsonschema" in sys.modules or _IRI_GRAMMAR in sys.modules:
            return importlib.import_module("jsonschema")
        sys.modules[_IRI_GRAMMAR] = None  # type: ignore[assignment]  # `import` now raises ImportError
        try:
            return importlib.import_module("jsonschema")
        finally:
            if sys.modules.get(_IRI_GRAMMAR, False) is None:
                del sys.modules[_IRI_GRAMMAR]


@cache
def import_jsonschema_in_background() -> None:
    """Start loading jsonschema on a thread, once, while a server starts.

    The gate's first check and the SDK's first structured result need it, and the start is time spent waiting.
    """
    threading.Thread(target=jsonschema_module, name="import-jsonschema", daemon=True).start()
