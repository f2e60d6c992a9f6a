"""A skill as the simulated model reads it: the catalog in the system prompt, a body's `## Method` steps (notebook 06).

The catalog is tier 1 (names and descriptions in the system prompt); a skill is activated when the
user names it, or when a description shares at least `ACTIVATE_AT` content words with the user's
messages (most shared wins, ties go to the catalog's order; sentences starting "Not" or "Do not" are
left out). A body (tier 2) is followed through its `## Method` list, whose grammar `_skill_policy.py` gives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from labkit._i18n import _

from ._words import content_words

__all__ = ["ACTIVATE_AT", "Step", "choose_skill", "read_catalog", "read_method", "shared_words"]

ACTIVATE_AT = 2
_CATALOG = re.compile(r"<skill>\s*<name>(.*?)</name>\s*<description>(.*?)</description>", re.S)
_ITEM = re.compile(r"^\s*(\d+)\.\s+\**([A-Za-z]+)\**\s*(.*)$")
_CALL = re.compile(r"`([\w./-]+)\((.*?)\)`")
_QUOTE = re.compile(r"\"([^\"]+)\"")
_MENTIONS = re.compile(r"when the question mentions (.+?)\.?\s*$", re.I)
_NEGATIVE = re.compile(r"\s*(not|do not|don't|never)\b", re.I)


@dataclass(frozen=True)
class Step:
    """One numbered line of a skill's Method, as this model understands it (notebook 06)."""

    n: int
    verb: str
    target: str = ""
    arguments: dict[str, str] = field(default_factory=dict)
    quote: str = ""
    mentions: tuple[str, ...] = ()


def read_catalog(system: str) -> list[tuple[str, str]]:
    """The (name, description) pairs of the `<available_skills>` block in a system prompt (notebook 06)."""
    return [(n.strip(), " ".join(d.split())) for n, d in _CATALOG.findall(system or "")]


def read_method(body: str) -> list[Step]:
    """The numbered items under `## Method`, with verb, target, arguments and quoted text (notebook 06)."""
    section = re.split(r"^##\s+Method\s*$", body, maxsplit=1, flags=re.M | re.I)
    if len(section) < 2:
        return []
    steps = []
    for line in re.split(r"^##\s", section[1], maxsplit=1, flags=re.M)[0].splitlines():
        item = _ITEM.match(line)
        if item is None:
            continue
        n, verb, rest = int(item.group(1)), item.group(2).lower(), item.group(3)
        call = _CALL.search(rest)
        quote = _QUOTE.search(rest)
        mentions = _MENTIONS.search(rest)
        path = re.search(r"`([^`(]+)`", rest)
        steps.append(
            Step(
                n,
                verb,
                target=call.group(1) if call else (path.group(1) if path else ""),
                arguments=_split_arguments(call.group(2)) if call else {},
                quote=quote.group(1) if quote else "",
                mentions=tuple(w.strip() for w in re.split(r",|\bor\b|\band\b", mentions.group(1)) if w.strip())
                if mentions
                else (),
            )
        )
    return steps


def choose_skill(catalog: list[tuple[str, str]], text: str) -> tuple[str | None, list[str]]:
    """The skill to activate for the user's words, and why: named by the user, or the best description (notebook 06)."""
    for name, _description in catalog:
        if re.search(rf"(?<![\w/-]){re.escape(name)}(?![\w/-])", text, re.I):
            return name, [_("skill {name!r} is named by the user: activate it").format(name=name)]
    scored = [(len(shared_words(d, text)), -i, n, sorted(shared_words(d, text))) for i, (n, d) in enumerate(catalog)]
    notes = [
        _("skill {name!r} shares {n} word(s) with the user: {shared}").format(name=name, n=n, shared=shared)
        for n, _rank, name, shared in scored
    ]
    best = max(scored, default=None)
    if best is None or best[0] < ACTIVATE_AT:
        return None, [*notes, _("no description shares {n} or more words: no skill is loaded").format(n=ACTIVATE_AT)]
    return best[2], [
        *notes,
        _("activate {name!r} (most shared words, at least {n})").format(name=best[2], n=ACTIVATE_AT),
    ]


def shared_words(description: str, text: str) -> set[str]:
    """The content words a description shares with the user's text; "Not …" sentences left out (notebook 06)."""
    sentences = re.split(r"(?<=[.!?])\s+", description)
    return content_words(" ".join(s for s in sentences if not _NEGATIVE.match(s))) & content_words(text)


def _split_arguments(text: str) -> dict[str, str]:
    pairs = re.findall(r"(\w+)\s*=\s*(<[^>]*>|\"[^\"]*\"|[^,]+)", text)
    return {k: v.strip() for k, v in pairs}
