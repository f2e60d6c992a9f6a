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
_CHINESE_STOP = "。！？"
_QUOTES = {'"': '"', "“": "”", "「": "」"}
_CLAUSE = re.compile(r",?\s*\b(?:and )?then\b|;|[，,]?\s*(?:然后|接着|随后|再)(?=\s*(?:调用|读))|；")
# Each form in English, then in Chinese (a path or a tool's name is the same identifier in both).
_READ = (
    re.compile(r"\bread\s+(?:the\s+(?:file\s+|contents\s+of\s+))?(?P<path>[~./][^\s,;'\"`)]*)", re.I),
    re.compile(r"(?:读取|读一下|读|打开)\s*(?:文件\s*)?(?P<path>[~./][^\s,;'\"`)，。；、）]*)"),
)
_CALL = (
    re.compile(r"\bcall\s+(?:the\s+)?`?(?P<tool>[A-Za-z_][\w.-]*)`?(?:\s+tool)?(?:\s+with\s+(?P<args>.+))?", re.I),
    re.compile(
        r"调用\s*(?:工具\s*)?`?(?P<tool>[A-Za-z_][A-Za-z0-9_.-]*)`?(?:\s*工具)?"
        r"(?:\s*[，,：:]?\s*(?:参数(?:为|是)?\s*[：:]?\s*)?(?P<args>[A-Za-z_]\w*\s*=.+))?"
    ),
)
_ARG = re.compile(
    r"(?P<key>\w+)\s*=\s*(?P<value>'[^']*'|\"[^\"]*\"|‘[^’]*’|“[^”]*”|.+?)"
    r"(?=\s+and\s+\w+\s*=|\s*[,，、]\s*\w+\s*=|\s*(?:和|并且|以及)\s*\w+\s*=|$)"
)
_PASS = (
    re.compile(r"\bpass\s+(?:its|the|their)\s+contents?(?:\s+of\s+(?P<path>\S+))?\s+as\s+['\"`]?(?P<param>\w+)", re.I),
    re.compile(
        r"把\s*(?:(?P<path>[~./][^\s，。；]*?)\s*的|它的|其|文件的)?\s*内容\s*(?:作为|当作|填进|填入|放进|放入)\s*"
        r"(?:参数\s*)?['\"`‘“]?(?P<param>[A-Za-z_][A-Za-z0-9_]*)"
    ),
)
_CONTENTS_OF = (
    re.compile(r"^the contents? of (?P<path>\S+)$", re.I),
    re.compile(r"^(?:文件\s*)?(?P<path>[~./]\S*?)\s*的(?:全部)?内容$"),
)
_EVERYTHING = re.compile(
    r"^(?:everything you(?: have)? read(?: so far)?|all (?:the )?(?:tool )?results)$|"
    r"^你?(?:到目前为止|之前)?(?:已经)?读到的(?:全部|所有|一切)(?:内容)?$|^(?:所有|全部)的?(?:工具)?结果$",
    re.I,
)
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


def _first(patterns: tuple[re.Pattern[str], ...], text: str, anchored: bool = False) -> re.Match[str] | None:
    """The first form, English then Chinese, found in `text` (or matching all of it)."""
    return next(filter(None, (p.match(text) if anchored else p.search(text) for p in patterns)), None)


def _value(raw: str) -> Any:
    raw = raw.strip().rstrip(".。")
    if raw[:1] in "'\"‘“" and raw[-1:] == {"‘": "’", "“": "”"}.get(raw[:1], raw[:1]):
        return raw[1:-1]
    if match := _first(_CONTENTS_OF, raw, anchored=True):
        return ("contents", match["path"].rstrip(".,"))
    if _EVERYTHING.match(raw):
        return ("everything", None)
    return raw


def _sentences(text: str) -> list[str]:
    """English sentences, each cut again after a Chinese full stop that no quotation mark holds (a quoted message
    body is one value, whatever stops it has)."""
    found = []
    for sentence in _SENTENCE.split(text):
        start, closing = 0, ""
        for index, char in enumerate(sentence):
            if closing:
                closing = "" if char == closing else closing
            elif char in _QUOTES:
                closing = _QUOTES[char]
            elif char in _CHINESE_STOP:
                found.append(sentence[start : index + 1])
                start = index + 1
        found.append(sentence[start:])
    return found


def orders_in(text: str, source: str, tool: str | None = None) -> list[Order]:
    """Every instruction in `text` the naive model understands; `tool`: whose description it is (notebook 07)."""
    orders = []
    for sentence in _sentences(as_read(text)):
        sentence = " ".join(sentence.split())
        for clause in _CLAUSE.split(sentence):
            if match := _first(_CALL, clause):
                arguments = {m["key"]: _value(m["value"]) for m in _ARG.finditer(match["args"] or "")}
                orders.append(Order(source, sentence, match["tool"], arguments))
            elif match := _first(_READ, clause):
                orders.append(Order(source, sentence, "read", {"path": match["path"].rstrip(".,")}))
            if (match := _first(_PASS, clause)) and tool is not None:
                path = match["path"].rstrip(".,") if match["path"] else None
                orders.append(Order(source, sentence, fill=(tool, match["param"], path)))
    return orders
