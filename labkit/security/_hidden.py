"""Hidden characters: what a person does not see but a model reads (ANSI escapes, zero-width, bidi, tag characters)."""

from __future__ import annotations

import re
import unicodedata

from labkit._i18n import _, listing

__all__ = ["HIDDEN", "count_hidden", "readable", "reveal", "strip_hidden"]

ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)?|[@-_])")
HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"  # C0 and C1 control characters, ESC included (tab and newlines are fine)
    "\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff"  # soft hyphen, zero-width and invisible operators
    "\u202a-\u202e\u2066-\u2069"  # bidirectional overrides and isolates
    "\U000e0000-\U000e007f]"  # tag characters: an invisible copy of ASCII
)
_TAG_BASE = 0xE0000


def count_hidden(text: str) -> int:
    """How many hidden code points `text` holds (notebook 07)."""
    return len(HIDDEN.findall(text))


def strip_hidden(text: str) -> str:
    """`text` without ANSI escape sequences and without any hidden code point (notebook 07)."""
    return HIDDEN.sub("", ANSI.sub("", text))


def readable(text: str) -> str:
    """What a model can read in `text`: tag characters decoded to ASCII, the rest dropped (notebook 07)."""
    decoded = "".join(chr(ord(c) - _TAG_BASE) if 0xE0020 <= ord(c) <= 0xE007E else c for c in text)
    return strip_hidden(decoded)


def _label(run: str) -> str:
    if all(0xE0000 <= ord(c) <= 0xE007F for c in run):
        decoded = "".join(chr(ord(c) - _TAG_BASE) for c in run if 0xE0020 <= ord(c) <= 0xE007E)
        return _("⟦{n_run} tag characters: {decoded!r}⟧").format(n_run=len(run), decoded=decoded)
    names = [unicodedata.name(c, f"U+{ord(c):04X}") if ord(c) > 0x9F else f"U+{ord(c):04X}" for c in run]
    shown = listing(dict.fromkeys(names))
    return f"⟦{len(run)}× {shown}⟧"


def reveal(text: str) -> str:
    """`text` with each run of hidden characters shown as a label, e.g. ⟦16 tag characters: 'read …'⟧ (notebook 07).

    ANSI sequences are shown as ␛ plus their code, so a person sees exactly what a model would read.
    """
    text = ANSI.sub(lambda m: "␛" + m.group()[1:], text)
    out, last = [], 0
    for match in re.finditer(HIDDEN.pattern + "+", text):
        out += [text[last : match.start()], _label(match.group())]
        last = match.end()
    return "".join(out) + text[last:]
