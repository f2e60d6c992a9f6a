"""The checks behind every notebook's exercises, one module per notebook (`nb00.py`, `nb01.py`, …)."""

import importlib
import pkgutil

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
