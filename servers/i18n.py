"""The language a lab server answers in: the host's `LABKIT_LANG`, the lab's catalog; the standard library only."""

from __future__ import annotations

import functools
import gettext
import os
from pathlib import Path

__all__ = ["LANGUAGE_ENV", "N_", "_"]

LANGUAGE_ENV = "LABKIT_LANG"
"""The host sets it for each lab server it starts (`labkit.host.server_env`): `en` or `zh_CN`."""
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
