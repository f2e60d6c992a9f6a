"""Quoting tool results in the final answer: numbers read from the structured JSON the host sends back."""

from __future__ import annotations

import json
from typing import Any

from ._dialogue import ToolOutcome

__all__ = ["quote_chart", "quote_query"]

_QUOTE_LIMIT = 200


def _failed(outcome: ToolOutcome) -> bool:
    """Chat and Responses carry no error flag, so an error result is recognised by its text too."""
    return outcome.is_error or outcome.text.startswith("Error")


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _find(data: Any, *keys: str) -> Any:
    """The first value stored under one of `keys`, searching nested objects depth first."""
    if isinstance(data, dict):
        for key in keys:
            if key in data:
                return data[key]
        for value in data.values():
            found = _find(value, *keys)
            if found is not None:
                return found
    return None


def _count(row: dict[str, Any]) -> Any:
    return _find(row, "count", "errors", "total")


def _peak(data: Any) -> tuple[Any, Any] | None:
    peak = _find(data, "peak")
    if isinstance(peak, dict):
        return _find(peak, "hour", "time", "bucket", "start"), _count(peak)
    if _find(data, "peak_hour") is not None:
        return _find(data, "peak_hour"), _find(data, "peak_errors", "peak_count")
    series = _find(data, "hourly", "by_hour", "buckets", "series")
    rows = [r for r in series or [] if isinstance(r, dict) and isinstance(_count(r), (int, float))]
    top = max(rows, key=_count, default=None)
    return (_find(top, "hour", "time", "bucket", "start"), _count(top)) if top else None


def _top_error(data: Any) -> str | None:
    top = _find(data, "top_error", "top_errors")
    top = top[0] if isinstance(top, list) and top else top
    if isinstance(top, dict):
        code, message = top.get("code") or top.get("type") or top.get("name"), top.get("message") or top.get("error")
        label = ": ".join(str(part) for part in (code, message) if part)
        return f"{label} ({top['count']}x)" if "count" in top else label
    return str(top) if top else None


def quote_query(outcome: ToolOutcome | None, service: str, since: str) -> str:
    """The numbers of an error query result, quoted in a sentence or two (notebook 03)."""
    if outcome is None:
        return "I have no query result to quote."
    if _failed(outcome):
        return f"The query failed: {outcome.text[:_QUOTE_LIMIT]}"
    data = _json(outcome.text)
    total = _find(data, "total", "total_errors") if isinstance(data, dict) else None
    if total is None:
        return f"The query returned: {outcome.text[:_QUOTE_LIMIT]}"
    parts = [f"{_find(data, 'service') or service} logged {total} errors since {_find(data, 'since') or since}."]
    peak = _peak(data)
    if peak:
        parts.append(f"The peak was {peak[0]} with {peak[1]} errors.")
    top = _top_error(data)
    if top:
        parts.append(f"The top error was {top}.")
    return " ".join(parts)


def quote_chart(outcome: ToolOutcome | None) -> str:
    """Where the chart tool said it saved the chart (notebook 03)."""
    if outcome is None:
        return "No chart was made."
    if _failed(outcome):
        return f"The chart could not be made: {outcome.text[:_QUOTE_LIMIT]}"
    data = _json(outcome.text)
    if not isinstance(data, dict) or _find(data, "path", "saved_to", "file", "uri", "url") is None:
        return f"The chart tool said: {outcome.text[:_QUOTE_LIMIT]}"
    space = f" (the {data['space']} space)" if data.get("space") else ""
    return f"The trend chart was saved to {_find(data, 'path', 'saved_to', 'file', 'uri', 'url')}{space}."
