"""nbval's sanitizer hides what the real mcp-server-time changes from day to day, and nothing else."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import anyio
import pytest
from mcp import Client
from nbval.plugin import get_sanitize_patterns

from labkit import ServerSpec, Trace, stdio_transport
from labkit._i18n import LANGUAGES
from labkit.trace import sequence_diagram, summarise_frame, table
from tests.servers_helpers import TIME_SERVER

PATTERNS = get_sanitize_patterns((Path(__file__).parent / "nbval_sanitize.cfg").read_text(encoding="utf-8"))
# Lesson 02's call: neither zone has daylight saving time, so only the date and the weekday change.
CONVERSION = {"source_timezone": "Asia/Shanghai", "time": "09:00", "target_timezone": "Asia/Tokyo"}


def sanitized(text: str) -> str:
    for regex, replace in PATTERNS:
        text = re.sub(regex, replace, text)
    return text


def answer(trace: Trace) -> dict:
    """The server's result of the conversion."""
    (reply,) = [e for e in trace.of_kind("jsonrpc.response") if e.name == "convert_time"]
    return reply.payload["result"]


def shown(trace: Trace) -> str:
    """What lesson 02 prints of the answer, its trace table and its sequence diagram."""
    result = answer(trace)
    rows = table(trace)[["from", "to", "kind", "name", "summary"]]
    return "\n".join(
        [
            str(result["structuredContent"]),
            result["content"][0]["text"],
            rows.to_string(),
            rows.to_html(),
            str(sequence_diagram(trace)),
        ]
    )


def retold(trace: Trace, change: dict[str, str]) -> Trace:
    """The same frames with the server's words changed, summarised again as the tap summarises them."""
    methods = {e.ref: e.payload.get("method") for e in trace if e.kind == "jsonrpc.request"}
    again = Trace()
    for event in trace:
        text = json.dumps(event.payload)
        for old, new in change.items():
            text = text.replace(old, new)
        payload = json.loads(text)
        again.record(
            event.src,
            event.dst,
            event.kind,
            summarise_frame(payload, methods.get(event.ref)),
            ref=event.ref,
            name=event.name,
            payload=payload,
            round=event.round,
            **event.meta,
        )
    return again


@pytest.fixture(scope="module")
def today() -> tuple[Trace, dt.date]:
    async def convert() -> Trace:
        trace = Trace()
        with anyio.fail_after(30):
            async with Client(stdio_transport(ServerSpec("time", command=TIME_SERVER), trace)) as client:
                await client.call_tool("convert_time", CONVERSION)
        return trace

    trace = anyio.run(convert)
    return trace, dt.date.fromisoformat(answer(trace)["structuredContent"]["source"]["datetime"][:10])


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("days_later", range(1, 8))
def test_the_same_conversion_on_any_other_day_of_the_week_sanitizes_the_same(
    today, days_later, language, monkeypatch
) -> None:
    monkeypatch.setenv("LABKIT_LANG", language)
    trace, date = today
    other = date + dt.timedelta(days=days_later)
    later = retold(trace, {date.isoformat(): other.isoformat(), date.strftime("%A"): other.strftime("%A")})
    assert shown(later) != shown(retold(trace, {}))
    assert sanitized(shown(later)) == sanitized(shown(retold(trace, {})))


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_different_clock_time_in_the_answer_still_shows(today, language, monkeypatch) -> None:
    monkeypatch.setenv("LABKIT_LANG", language)
    trace, _ = today
    wrong = retold(trace, {"T10:00:00+09:00": "T11:00:00+09:00", "+1.0h": "+2.0h"})
    assert sanitized(shown(wrong)) != sanitized(shown(retold(trace, {})))


def test_loopback_ports_are_hidden_and_only_they() -> None:
    """Notebook 09 prints its servers' URLs: the port is picked at random per run, the rest must still compare."""
    one = 'resource_metadata="http://127.0.0.1:24284/.well-known/oauth-protected-resource/mcp"'
    other = one.replace("24284", "19442")
    assert sanitized(one) == sanitized(other) and "/.well-known/oauth-protected-resource/mcp" in sanitized(one)
    assert sanitized("http://127.0.0.1:24284/mcp") != sanitized("http://127.0.0.1:24284/sse")
    assert sanitized("lasts 3600 s, example.com:8443") == "lasts 3600 s, example.com:8443"


def test_a_tables_row_numbers_are_hidden_and_its_rows_are_not() -> None:
    """A busy machine's note moves the numbers of the events after it; the rows' contents still count."""
    import pandas as pd

    rows = pd.DataFrame({"kind": ["jsonrpc.request", "jsonrpc.response"], "summary": ["tools/call", "slept 0 s"]})
    moved = rows.set_axis([19, 20])
    assert sanitized(rows.set_axis([18, 19]).to_html()) == sanitized(moved.to_html())
    assert sanitized(rows.set_axis([18, 19]).to_string()) == sanitized(moved.to_string())
    changed = rows.assign(summary=["tools/call", "slept 1 s"]).set_axis([18, 19])
    assert sanitized(changed.to_html()) != sanitized(moved.to_html())
    assert sanitized(changed.to_string()) != sanitized(moved.to_string())
