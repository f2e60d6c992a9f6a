"""The language a lab server answers in: the host's `LABKIT_LANG`, the lab's catalog; the standard library only."""

from __future__ import annotations

import functools
import gettext
import os
from pathlib import Path

from labkit.server_contract import LANGUAGE_ENV

__all__ = ["LANGUAGE_ENV", "N_", "_"]

_LOCALE_DIR = Path(__file__).resolve().parent.parent / "labkit" / "locale"


@functools.cache
def _catalog(lang: str) -> gettext.NullTranslations:
    # Any other value (unset, or a language the lab has no catalog for) is English, the source text.
    return gettext.translation("labkit", _LOCALE_DIR, languages=[lang], fallback=True)


def _(message: str) -> str:
    """`message` in the language the host asked for (the English text when there is no translation)."""
    return _catalog(os.environ.get(LANGUAGE_ENV, "en")).gettext(message)


def N_(message: str) -> str:
    """Mark `message` for translation without translating it yet (strings defined at import time)."""
    return message
