"""Reading tool arguments out of the user's words, by the tool's JSON Schema (cities become IANA zones)."""

from __future__ import annotations

import re
from typing import Any

from labkit._i18n import _

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
_NUMBER = re.compile(r"(?<![\w.:-])-?\d+(?:\.\d+)?(?![\w:-])(?:\s+(hours?|minutes?|seconds?|days?|weeks?))?")
_NAMED_IN_DESCRIPTION = re.compile(r"\"([\w-]+)\"|'([\w-]+)'")
_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'|`([^`]+)`|“([^”]+)”|‘([^’]+)’|「([^」]+)」")
_PLACE = re.compile(r"\b(?:in|for|at|and)\s+([A-Z][a-z]+(?:\s[A-Z][a-z]+)*)")
_TIME_NAMES = {"date", "day", "since", "until", "start", "end", "from", "to", "time", "when", "after", "before"}
_PLACE_NAMES = {"city", "location", "place", "country", "region", "town"}
_ZONE_NAMES = {"timezone", "tz", "zone"}
_IANA = re.compile(
    r"\b(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc)/[A-Za-z_]+(?:/[A-Za-z_]+)?"
)
_CLOCK = re.compile(r"\b([01]?\d|2[0-3])[:.]([0-5]\d)\s*(am|pm|a\.m\.|p\.m\.)?(?![\d:])", re.I)
# The cities a learner is likely to name, each with its IANA zone (a tool wants the zone, a person says the city).
_CITY_ZONES = {
    "amsterdam": "Europe/Amsterdam",
    "bangkok": "Asia/Bangkok",
    "beijing": "Asia/Shanghai",
    "berlin": "Europe/Berlin",
    "cairo": "Africa/Cairo",
    "chicago": "America/Chicago",
    "delhi": "Asia/Kolkata",
    "dubai": "Asia/Dubai",
    "hangzhou": "Asia/Shanghai",
    "hong kong": "Asia/Hong_Kong",
    "istanbul": "Europe/Istanbul",
    "jakarta": "Asia/Jakarta",
    "lagos": "Africa/Lagos",
    "london": "Europe/London",
    "los angeles": "America/Los_Angeles",
    "madrid": "Europe/Madrid",
    "mexico city": "America/Mexico_City",
    "moscow": "Europe/Moscow",
    "mumbai": "Asia/Kolkata",
    "nairobi": "Africa/Nairobi",
    "new york": "America/New_York",
    "oslo": "Europe/Oslo",
    "paris": "Europe/Paris",
    "rome": "Europe/Rome",
    "san francisco": "America/Los_Angeles",
    "sao paulo": "America/Sao_Paulo",
    "seoul": "Asia/Seoul",
    "shanghai": "Asia/Shanghai",
    "singapore": "Asia/Singapore",
    "stockholm": "Europe/Stockholm",
    "sydney": "Australia/Sydney",
    "taipei": "Asia/Taipei",
    "tokyo": "Asia/Tokyo",
    "toronto": "America/Toronto",
    "utc": "UTC",
    "vancouver": "America/Vancouver",
    "zurich": "Europe/Zurich",
}
_CITY = re.compile(r"\b(" + "|".join(sorted(map(re.escape, _CITY_ZONES), key=len, reverse=True)) + r")\b", re.I)
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


def _is_zone(name: str) -> bool:
    return bool(_ZONE_NAMES & set(re.split(r"[_\-]", name.lower())))


def _zones(text: str) -> list[tuple[int, str]]:
    """IANA names as written ("Asia/Tokyo"), then known cities outside them ("Tokyo" → "Asia/Tokyo")."""
    found = [(m.start(), m.group()) for m in _IANA.finditer(text)]
    spans = [range(m.start(), m.end()) for m in _IANA.finditer(text)]
    found += [
        (m.start(), _CITY_ZONES[m.group().lower()])
        for m in _CITY.finditer(text)
        if not any(m.start() in span for span in spans)
    ]
    return found


def _clocks(text: str) -> list[tuple[int, str]]:
    """Wall-clock times as 24-hour HH:MM ("9:30" → "09:30", "9.30 pm" → "21:30")."""
    found = []
    for m in _CLOCK.finditer(text):
        hour, half = int(m.group(1)), (m.group(3) or "").lower().replace(".", "")
        hour = hour % 12 + (12 if half == "pm" else 0) if half else hour
        found.append((m.start(), f"{hour:02d}:{m.group(2)}"))
    return found


def _named_values(prop: dict[str, Any], text: str) -> list[tuple[int, str]]:
    """Values a description lists in quotes ('One of "pending", "shipped"…'), read like an enum from the text."""
    named = {next(g for g in m.groups() if g) for m in _NAMED_IN_DESCRIPTION.finditer(prop.get("description", ""))}
    if len(named) < 2:
        return []
    return [
        (m.start(), value)
        for value in named
        for m in re.finditer(rf"(?<![\w\"'`-]){re.escape(value)}(?![\w\"'`-])", text, re.I)
    ]


def _wants_clock(prop: dict[str, Any]) -> bool:
    """A bare wall-clock time ("HH:MM"); a format with a date in it ("YYYY-MM-DDTHH:MM") wants the timestamp."""
    description = prop.get("description", "")
    return "HH:MM" in description and "YYYY" not in description


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
    elif _is_zone(name):
        found += _zones(text)
    elif _is_time(name, prop) and _wants_clock(prop):
        found += _clocks(text)
    elif _is_time(name, prop):
        found += [(m.start(), m.group().replace(" ", "T")) for m in _ISO.finditer(text)]
    elif types & {"integer", "number"}:
        # "72 hours" is a duration: it fills only a parameter named for its unit (`hours`), never a `limit`.
        found += [
            (m.start(), coerce(prop, m.group().split()[0]))
            for m in _NUMBER.finditer(text)
            if not m.group(1) or m.group(1).rstrip("s") in name.lower()
        ]
    elif "boolean" in types:
        found += [
            (m.start(), m.group(1).lower() in _TRUE) for m in re.finditer(rf"{name}\W+(true|false|yes|no)", text, re.I)
        ]
    elif "string" in types or not types:
        found += [(m.start(), m.group()) for m in re.finditer(rf"\b[\w.]+[-_]{re.escape(name)}\b", text, re.I)]
        found += [(m.start(), next(g for g in m.groups() if g)) for m in _QUOTED.finditer(text)]
        found += _named_values(prop, text)
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
    dropped = _("dropped argument {name!r}: the offered schema does not declare it")
    notes = [dropped.format(name=k) for k in arguments if k not in fitted]
    for name in schema.get("required") or []:
        if name not in fitted and allows_null(properties.get(name, {})):
            fitted[name] = None
    return fitted, notes
