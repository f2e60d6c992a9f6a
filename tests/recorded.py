"""The canonical run as `tests/test_golden.py` keeps it recorded (and checks against a live run), for logic tests."""

from __future__ import annotations

import json
from pathlib import Path

from labkit.trace import Event, Trace

GOLDEN = Path(__file__).resolve().parent / "golden" / "canonical.json"


def canonical_trace() -> Trace:
    """The recorded canonical run; the golden copy drops times, so here its events are a millisecond apart."""
    return Trace([Event(**event, t=event["seq"] / 1000) for event in json.loads(GOLDEN.read_text(encoding="utf-8"))])
