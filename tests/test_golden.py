"""The canonical run's trace against a stored golden copy, so an SDK upgrade that changes the wire fails loudly.

Regenerate after an intended change with `LABKIT_UPDATE_GOLDEN=1 pytest tests/test_golden.py`, and
review the diff of `tests/golden/canonical.json` like any other change.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from typing import Any

from labkit.lessons import run_scenario
from tests.recorded import GOLDEN

_SEALED_STATE = re.compile(r"v1\.[A-Za-z0-9_-]{40,}")
_VOLATILE_HEADERS = {
    "x-stainless-os",
    "x-stainless-arch",
    "x-stainless-runtime-version",
    "user-agent",
    "x-stainless-package-version",
    "x-stainless-runtime",
    "content-length",
}


def _normalised(value: Any) -> Any:
    """The trace without what varies between runs: times, sealed states, platform headers, image bytes."""
    if isinstance(value, dict):
        return {
            k: (
                "<volatile>"
                if k.lower() in _VOLATILE_HEADERS
                else "<image bytes>"
                if k == "data" and isinstance(v, str) and len(v) > 200
                else _normalised(v)
            )
            for k, v in value.items()
            if k != "t"
        }
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    if isinstance(value, str):
        return _SEALED_STATE.sub("<requestState>", value)
    return value


async def test_the_canonical_trace_matches_the_golden_copy():
    run = await run_scenario("canonical")
    actual = json.dumps(_normalised([e.to_dict() for e in run.trace]), indent=1, ensure_ascii=False, sort_keys=True)
    if os.environ.get("LABKIT_UPDATE_GOLDEN") or not GOLDEN.exists():
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(actual + "\n", encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8").rstrip("\n")
    if actual != expected:
        diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(), "golden", "this run", lineterm="", n=2)
        shown = "\n".join(list(diff)[:80])
        raise AssertionError(f"the canonical trace changed (set LABKIT_UPDATE_GOLDEN=1 if intended):\n{shown}")
