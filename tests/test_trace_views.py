"""Diagrams that read anywhere: a picture beside the Mermaid source, labels cut once with a true count."""

from __future__ import annotations

import base64
import re

from labkit.trace import Trace, sequence_diagram
from labkit.trace._summaries import fold
from labkit.trace._views import diagram_label

_MARKER = re.compile(r"…\(\+(\d+) chars\)")


def _trace(events: int) -> Trace:
    trace = Trace()
    for n in range(events):
        trace.record("host", "model", "model.request", f"request {n} " + "word " * 20, payload={"n": n})
        trace.record("model", "host", "model.response", f"reply {n}", payload={"n": n})
    return trace


def test_a_folded_summary_is_cut_once_and_counts_the_original():
    raw = "x" * 30 + "ERROR order-service db pool exhausted after 5000 ms " * 3
    label = "".join(diagram_label("[12] " + fold(raw)))
    (count,) = _MARKER.findall(label)
    shown = label[: label.index("…")]
    assert label.count("…") == 1 and int(count) == len("[12] " + raw) - len(shown)


def test_a_long_label_is_cut_once_and_a_short_one_not_at_all():
    text = "[3] a long label that does not fit in two lines of twenty six characters"
    lines = diagram_label(text)
    joined = " ".join(lines)
    assert len(lines) == 2 and joined.count("…") == 1
    assert int(_MARKER.search(joined).group(1)) == len(text) - len(joined[: joined.index("…")].rstrip())
    assert diagram_label("[3] short") == ["[3] short"]


def test_the_display_carries_mermaid_and_a_small_png():
    bundle = sequence_diagram(_trace(8))._repr_mimebundle_()
    assert set(bundle) == {"text/vnd.mermaid", "text/plain", "image/png"}
    picture = base64.b64decode(bundle["image/png"])
    assert picture[:8] == b"\x89PNG\r\n\x1a\n" and len(picture) <= 60_000


def test_a_long_trace_still_fits_the_budget():
    picture = base64.b64decode(sequence_diagram(_trace(40))._repr_mimebundle_()["image/png"])
    assert len(picture) <= 60_000, len(picture)
