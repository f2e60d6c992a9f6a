"""Diagrams that read anywhere: a picture beside the Mermaid source, labels cut once with a true count."""

from __future__ import annotations

import base64
import re
import textwrap
import unicodedata

from labkit.trace import Trace, sequence_diagram
from labkit.trace._columns import wrap_columns
from labkit.trace._labels import _LABEL_WIDTH, diagram_label
from labkit.trace._summaries import fold, summarise_frame

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


def test_a_result_of_pretty_printed_json_is_summarised_on_one_line():
    text = '{\n  "source": {\n    "timezone": "Asia/Shanghai"\n  }\n}'
    payload = {"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": text}], "isError": False}}
    summary = summarise_frame(payload, "tools/call")
    assert "\n" not in summary and summary.startswith('tools/call → text: { "source": { "timezone"')


def test_a_cancellation_names_the_request_it_ends():
    listen = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "listen-1"}}
    timeout = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "timed out"}}
    assert summarise_frame(listen) == "notifications/cancelled listen-1"
    assert summarise_frame(timeout) == "notifications/cancelled 3 (timed out)"


def test_a_long_label_is_cut_once_and_a_short_one_not_at_all():
    text = "[3] a long label that does not fit in two lines of twenty six characters"
    lines = diagram_label(text)
    joined = " ".join(lines)
    assert len(lines) == 2 and joined.count("…") == 1
    assert int(_MARKER.search(joined).group(1)) == len(text) - len(joined[: joined.index("…")].rstrip())
    assert diagram_label("[3] short") == ["[3] short"]


def _columns(line: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


def test_text_with_no_wide_character_wraps_exactly_as_textwrap():
    texts = [
        "[15] log store: 401 order-service errors 20:00-23:00, peak 118 at 21:00",
        '[13] tools/call query_errors {"service":"order-service","since":"2026-10-29T20:00"}',
        "x" * 70,
        "a-b-c " * 12,
        "  spaced   out\ttext  ",
    ]
    for text in texts:
        for width in (8, 26, 40):
            assert wrap_columns(text, width) == textwrap.wrap(text, width, break_long_words=True), (text, width)


def test_a_chinese_character_takes_two_columns_and_a_line_may_break_before_any():
    text = "[31] 必需的工作已完成：query_errors ✓, render_error_trend ✓"
    lines = wrap_columns(text, 26)
    assert "".join(lines).replace(" ", "") == text.replace(" ", ""), "nothing lost, nothing added"
    assert lines == ["[31] 必需的工作已完成：", "query_errors ✓,", "render_error_trend ✓"]  # 23 columns, then a word
    assert wrap_columns("一二三四五", 4) == ["一二", "三四", "五"]
    assert wrap_columns("状态：order-service", 10) == ["状态：", "order-", "service"]


def test_a_chinese_label_is_cut_to_the_same_width_as_an_english_one():
    label = diagram_label("[12] 把关 query_errors：放行：参数符合输入模式，调用方已获授权，不需要批准")
    shown = [line.rstrip("：，。、；）") for line in label]  # a closing mark hangs past the width, as Chinese is set
    assert len(label) == 2 and max(map(_columns, shown)) <= _LABEL_WIDTH and "…" in label[-1], label


def test_a_wrapped_chinese_label_never_begins_a_line_with_a_closing_mark():
    """What the review of the zh diagrams found: `[10] POST /v1/messages` then `：1 条消息` on the next line."""
    for text in ("[10] POST /v1/messages：1 条消息，1 个工具", "[12] 把关 query_errors：放行（只读，无需批准）"):
        lines = diagram_label(text)
        assert not any(line.startswith(("：", "，", "。", "）")) for line in lines), lines
        assert "".join(lines).replace(" ", "") == text.replace(" ", ""), "nothing lost, nothing added"


def test_the_display_carries_mermaid_and_a_small_png():
    bundle = sequence_diagram(_trace(8))._repr_mimebundle_()
    assert set(bundle) == {"text/markdown", "text/plain", "image/png"}
    assert bundle["text/markdown"] == f"```mermaid\n{bundle['text/plain']}\n```"  # JupyterLab draws the fence
    picture = base64.b64decode(bundle["image/png"])
    assert picture[:8] == b"\x89PNG\r\n\x1a\n" and len(picture) <= 60_000


def test_a_long_trace_still_fits_the_budget():
    picture = base64.b64decode(sequence_diagram(_trace(40))._repr_mimebundle_()["image/png"])
    assert len(picture) <= 60_000, len(picture)
