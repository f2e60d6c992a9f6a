"""Word handling for the rule-based policy: tokens, crude English stems, stop words."""

from __future__ import annotations

import re

__all__ = ["content_words", "name_words", "stem"]

_STOP_WORDS = frozenset(
    """a an and are as at be by can could did do does for from get give has have how i in is it its me
    my of on or please show tell than that the their then there this to use used was what when where
    which who why will with would you your""".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def stem(word: str) -> str:
    """A deliberately crude English stem ("errors" → "error", "charts" → "chart") (notebook 01)."""
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """The stems of the words in `text` that carry meaning (no stop words) (notebook 01)."""
    return {stem(w) for w in _WORD.findall(_CAMEL.sub(" ", text or "")) if w.lower() not in _STOP_WORDS}


def name_words(name: str) -> set[str]:
    """The words inside an identifier: `logs__query_errors` → {"log", "query", "error"} (notebook 01)."""
    return content_words(re.sub(r"[._\-]+", " ", name))
