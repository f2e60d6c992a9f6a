"""Reading tool arguments out of the user's words, by the tool's JSON Schema."""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "allows_null",
    "candidates",
    "coerce",
    "extract_arguments",
    "fit_arguments",
    "guess_value",
    "missing_required",
]

_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b")
_NUMBER = re.compile(r"(?<![\w.:-])-?\d+(?:\.\d+)?(?![\w:-])")
_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'|`([^`]+)`")
_PLACE = re.compile(r"\b(?:in|for|at|and)\s+([A-Z][a-z]+(?:\s[A-Z][a-z]+)*)")
_TIME_NAMES = {"date", "day", "since", "until", "start", "end", "from", "to", "time", "when", "after", "before"}
_PLACE_NAMES = {"city", "location", "place", "country", "region", "town"}
_TRUE = {"true", "yes", "on", "1"}


def _types(prop: dict[str, Any]) -> set[str]:
    kind = prop.get("type")
    return set(kind) if isinstance(kind, list) else {kind} if kind else set()


def allows_null(prop: dict[str, Any]) -> bool:
    """True when a property accepts `null` (how strict mode marks an optional parameter) (notebook 01)."""
    return "null" in _types(prop) or any(o.get("type") == "null" for o in prop.get("anyOf", []))


def coerce(prop: dict[str, Any], text: str) -> Any:
    """Turn a word into the property's type (notebook 01)."""
    types = _types(prop)
    try:
        if "integer" in types:
            return int(float(text))
        if "number" in types:
            return float(text)
    except ValueError:
        return text
    if "boolean" in types:
        return text.lower() in _TRUE
    return text


def _is_time(name: str, prop: dict[str, Any]) -> bool:
    return prop.get("format") in {"date", "date-time"} or bool(_TIME_NAMES & set(re.split(r"[_\-]", name.lower())))


def candidates(name: str, prop: dict[str, Any], text: str) -> list[tuple[int, Any]]:
    """Every (position, value) in `text` that could fill parameter `name`, in the order mentioned (notebook 01)."""
    found: list[tuple[int, Any]] = []
    explicit = re.search(rf"\b{re.escape(name)}\s*[=:]\s*(\"[^\"]*\"|'[^']*'|[^\s,;]+)", text)
    if explicit:
        return [(explicit.start(), coerce(prop, explicit.group(1).strip("\"'")))]
    types = _types(prop)
    if prop.get("enum"):
        for value in prop["enum"]:
            if value is not None:
                found += [
                    (m.start(), value) for m in re.finditer(rf"(?<![\w-]){re.escape(str(value))}(?![\w-])", text, re.I)
                ]
    elif _is_time(name, prop):
        found += [(m.start(), m.group().replace(" ", "T")) for m in _ISO.finditer(text)]
    elif types & {"integer", "number"}:
        found += [(m.start(), coerce(prop, m.group())) for m in _NUMBER.finditer(text)]
    elif "boolean" in types:
        found += [
            (m.start(), m.group(1).lower() in _TRUE) for m in re.finditer(rf"{name}\W+(true|false|yes|no)", text, re.I)
        ]
    elif "string" in types or not types:
        found += [(m.start(), m.group()) for m in re.finditer(rf"\b[\w.]+[-_]{re.escape(name)}\b", text, re.I)]
        found += [(m.start(), next(g for g in m.groups() if g)) for m in _QUOTED.finditer(text)]
        if name.lower() in _PLACE_NAMES:
            found += [(m.start(1), m.group(1)) for m in _PLACE.finditer(text)]
    return sorted(found, key=lambda item: item[0])


def extract_arguments(schema: dict[str, Any], text: str) -> dict[str, Any]:
    """Fill what the text names; each mention is used once, in order ("100 EUR to NOK") (notebook 01)."""
    arguments: dict[str, Any] = {}
    used: set[int] = set()
    for name, prop in (schema.get("properties") or {}).items():
        for position, value in candidates(name, prop, text):
            if position not in used:
                used.add(position)
                arguments[name] = value
                break
    return arguments


def missing_required(schema: dict[str, Any], arguments: dict[str, Any]) -> list[str]:
    """Required parameters the arguments do not fill (nullable ones count as filled by null) (notebook 01)."""
    properties = schema.get("properties") or {}
    return [n for n in schema.get("required") or [] if n not in arguments and not allows_null(properties.get(n, {}))]


def guess_value(name: str, prop: dict[str, Any]) -> Any:
    """A deterministic plausible value, used only when `tool_choice` forces a call (notebook 01)."""
    if "default" in prop:
        return prop["default"]
    for key in ("enum", "examples"):
        if prop.get(key):
            return prop[key][0]
    if allows_null(prop):
        return None
    if _is_time(name, prop):
        return "2026-10-29" if prop.get("format") == "date" else "2026-10-29T20:00"
    types = _types(prop)
    for kind, value in (("integer", 1), ("number", 1.0), ("boolean", False), ("array", []), ("object", {})):
        if kind in types:
            return value
    return f"example_{name}"


def fit_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Keep the declared arguments, send `null` for nullable required ones; notes say what changed (notebook 01)."""
    properties = schema.get("properties") or {}
    fitted = {k: v for k, v in arguments.items() if k in properties or not properties}
    notes = [f"dropped argument {k!r}: the offered schema does not declare it" for k in arguments if k not in fitted]
    for name in schema.get("required") or []:
        if name not in fitted and allows_null(properties.get(name, {})):
            fitted[name] = None
    return fitted, notes
