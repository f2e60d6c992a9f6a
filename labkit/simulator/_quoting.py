"""Quoting tool results in the final answer: numbers read from the structured JSON the host sends back."""

from __future__ import annotations

import json
from typing import Any

from labkit._i18n import _, listing, ngettext

from ._dialogue import ToolOutcome

__all__ = ["cut", "failed", "in_words", "join_sentences", "json_of", "quote_chart", "quote_query"]

_QUOTE_LIMIT = 300
# Chinese sentences end in a full-width mark and follow one another with no space between them.
_FULL_WIDTH_END = tuple("。！？；：）」”")


def join_sentences(sentences: list[str]) -> str:
    """The sentences as one text: a space after an English sentence, none after a Chinese one (notebook 00)."""
    text = ""
    for sentence in filter(None, (s.strip() for s in sentences)):
        text += sentence if not text or text.endswith(_FULL_WIDTH_END) else " " + sentence
    return text


def failed(outcome: ToolOutcome) -> bool:
    """Chat and Responses carry no error flag, so an error result is recognised by its text too."""
    return outcome.is_error or outcome.text.startswith("Error")


def cut(text: str, limit: int = _QUOTE_LIMIT) -> str:
    """One cut from the raw text, counting what was left out."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return _("{start}… (+{more} characters)").format(start=flat[:limit], more=len(flat) - limit)


def _value_words(value: Any) -> str:
    if isinstance(value, dict):
        return "(" + _fields(value) + ")"
    if isinstance(value, list):
        return ngettext("{n} item", "{n} items", len(value)).format(n=len(value))
    if value is None:
        return _("none")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _fields(data: dict[str, Any]) -> str:
    return listing(f"{key} {_value_words(value)}" for key, value in data.items())


def in_words(name: str, data: Any) -> str:
    """A result of a tool the model knows nothing about, its fields named in words (notebook 01).

    `name` is written as given (a tool name comes in backticks); nested objects go in parentheses, lists
    are counted, and the sentence is cut once, saying how much was left out.
    """
    if isinstance(data, dict):
        return _("{name} returned {fields}.").format(name=name, fields=cut(_fields(data)))
    return _("{name} returned {value}.").format(name=name, value=cut(_value_words(data)))


def json_of(text: str) -> Any:
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
        return _("{label} ({count}x)").format(label=label, count=top["count"]) if "count" in top else label
    return str(top) if top else None


def quote_query(outcome: ToolOutcome | None, service: str, since: str) -> str:
    """The numbers of an error query result, quoted in a sentence or two (notebook 03)."""
    if outcome is None:
        return _("I have no query result to quote.")
    if failed(outcome):
        return _("The query failed: {reason}").format(reason=cut(outcome.text))
    data = json_of(outcome.text)
    total = _find(data, "total", "total_errors") if isinstance(data, dict) else None
    if total is None:
        return (
            in_words(_("The query"), data)
            if isinstance(data, (dict, list))
            else _("The query said: {text}").format(text=cut(outcome.text))
        )
    parts = [
        _("{service} logged {total} errors since {since}.").format(
            service=_find(data, "service") or service, total=total, since=_find(data, "since") or since
        )
    ]
    peak = _peak(data)
    if peak:
        parts.append(_("The peak was {hour} with {count} errors.").format(hour=peak[0], count=peak[1]))
    top = _top_error(data)
    if top:
        parts.append(_("The top error was {error}.").format(error=top))
    return join_sentences(parts)


def quote_chart(outcome: ToolOutcome | None) -> str:
    """Where the chart tool said it saved the chart (notebook 03)."""
    if outcome is None:
        return _("No chart was made.")
    if failed(outcome):
        return _("The chart could not be made: {reason}").format(reason=cut(outcome.text))
    data = json_of(outcome.text)
    where = _find(data, "path", "saved_to", "file", "uri", "url") if isinstance(data, dict) else None
    if where is None:
        return (
            in_words(_("The chart tool"), data)
            if isinstance(data, (dict, list))
            else _("The chart tool said: {text}").format(text=cut(outcome.text))
        )
    if data.get("space"):
        return _("The trend chart was saved to {path} (the {space} space).").format(path=where, space=data["space"])
    return _("The trend chart was saved to {path}.").format(path=where)
