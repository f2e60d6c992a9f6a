"""What the naive model takes as an order in any text it reads: the imperative forms `_naive.py` lists (notebook 07)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..trace import base64_texts

__all__ = ["Order", "as_read", "orders_in", "schema_texts"]

_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])")
_INVISIBLE = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")
_SENTENCE = re.compile(r"(?<=[.!?])(?=\s|$|[A-Z<])|\n+")
_CLAUSE = re.compile(r",?\s*\b(?:and )?then\b|;")
_READ = re.compile(r"\bread\s+(?:the\s+(?:file\s+|contents\s+of\s+))?(?P<path>[~./][^\s,;'\"`)]*)", re.I)
_CALL = re.compile(r"\bcall\s+(?:the\s+)?`?(?P<tool>[A-Za-z_][\w.-]*)`?(?:\s+tool)?(?:\s+with\s+(?P<args>.+))?", re.I)
_ARG = re.compile(r"(?P<key>\w+)\s*=\s*(?P<value>'[^']*'|\"[^\"]*\"|.+?)(?=\s+and\s+\w+\s*=|\s*,\s*\w+\s*=|$)")
_PASS = re.compile(
    r"\bpass\s+(?:its|the|their)\s+contents?(?:\s+of\s+(?P<path>\S+))?\s+as\s+['\"`]?(?P<param>\w+)", re.I
)
_CONTENTS_OF = re.compile(r"^the contents? of (?P<path>\S+)$", re.I)
_EVERYTHING = re.compile(r"^(?:everything you(?: have)? read(?: so far)?|all (?:the )?(?:tool )?results)$", re.I)
_STRUCTURE = frozenset({"type", "format", "$ref", "required", "$schema", "additionalProperties"})


@dataclass(frozen=True)
class Order:
    """One instruction the naive model found: where, the sentence, the call or argument it asks for (notebook 07)."""

    source: str
    sentence: str
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    fill: tuple[str, str, str | None] | None = None  # (tool it applies to, parameter, path or None)


def as_read(text: str) -> str:
    """What a model reads: tag characters decoded to ASCII, ANSI escapes and zero-width ones dropped, and base64
    runs that decode to text followed by that text, as a real model would decode them (notebook 07)."""
    decoded = "".join(chr(ord(c) - 0xE0000) if 0xE0020 <= ord(c) <= 0xE007E else c for c in text)
    plain = _INVISIBLE.sub("", _ANSI.sub("", decoded))
    return "\n".join([plain, *base64_texts(plain)])


def schema_texts(schema: Any, where: str = "the input schema") -> list[tuple[str, str]]:
    """Every text a real model reads in an input schema: descriptions and titles at any depth (`$defs` too),
    enum values, defaults and examples, each with where it sits (notebook 07)."""
    if isinstance(schema, str):
        return [(where, schema)]
    if isinstance(schema, list):
        return [t for i, item in enumerate(schema) for t in schema_texts(item, f"{where}[{i}]")]
    if not isinstance(schema, dict):
        return []
    return [t for key, value in schema.items() if key not in _STRUCTURE for t in schema_texts(value, f"{where}.{key}")]


def _value(raw: str) -> Any:
    raw = raw.strip().rstrip(".")
    if raw[:1] in "'\"" and raw[-1:] == raw[:1]:
        return raw[1:-1]
    if match := _CONTENTS_OF.match(raw):
        return ("contents", match["path"].rstrip(".,"))
    if _EVERYTHING.match(raw):
        return ("everything", None)
    return raw


def orders_in(text: str, source: str, tool: str | None = None) -> list[Order]:
    """Every instruction in `text` the naive model understands; `tool`: whose description it is (notebook 07)."""
    orders = []
    for sentence in _SENTENCE.split(as_read(text)):
        sentence = " ".join(sentence.split())
        for clause in _CLAUSE.split(sentence):
            if match := _CALL.search(clause):
                arguments = {m["key"]: _value(m["value"]) for m in _ARG.finditer(match["args"] or "")}
                orders.append(Order(source, sentence, match["tool"], arguments))
            elif match := _READ.search(clause):
                orders.append(Order(source, sentence, "read", {"path": match["path"].rstrip(".,")}))
            if (match := _PASS.search(clause)) and tool is not None:
                path = match["path"].rstrip(".,") if match["path"] else None
                orders.append(Order(source, sentence, fill=(tool, match["param"], path)))
    return orders
