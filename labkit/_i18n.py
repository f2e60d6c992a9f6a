"""The learner's language: every message labkit shows, through gettext; English unless Chinese is chosen.

Below every wing (any wing may import it). `_("...")` translates now; `N_("...")` only marks a string
defined at import time (a table of meanings) for extraction, to be translated with `_()` where shown.
The catalog is `labkit/locale/<lang>/LC_MESSAGES/labkit.po`, compiled to `.mo` by `python tools/i18n.py`.
"""

from __future__ import annotations

import functools
import gettext
import os
from pathlib import Path

__all__ = ["LANGUAGES", "N_", "_", "in_language", "language", "ngettext"]

LANGUAGES = ("en", "zh_CN")
DOMAIN = "labkit"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
_ALIASES = {"en": "en", "en_us": "en", "en_gb": "en", "c": "en", "zh": "zh_CN", "zh_cn": "zh_CN",
            "zh_hans": "zh_CN", "zh_hans_cn": "zh_CN"}
# A generated Chinese notebook lives under notebooks/zh-CN/; its kernel starts in that folder.
_CHINESE_FOLDER = "zh-CN"


def language() -> str:
    """The language labkit speaks: `LABKIT_LANG` if set, else zh_CN inside `notebooks/zh-CN/`, else en (notebook 00)."""
    chosen = os.environ.get("LABKIT_LANG", "").strip()
    if chosen:
        key = chosen.split(".")[0].replace("-", "_").lower()
        if key not in _ALIASES:
            raise ValueError(f"LABKIT_LANG={chosen!r} is not a language of the lab; use one of {', '.join(LANGUAGES)}")
        return _ALIASES[key]
    return _STARTED_IN


def _folder_language() -> str:
    try:
        inside_chinese = _CHINESE_FOLDER in Path.cwd().parts
    except OSError:  # the working folder was removed under us
        inside_chinese = False
    return "zh_CN" if inside_chinese else "en"


# Read once, where the kernel started: a lesson that changes folder (notebook 08) keeps its language.
_STARTED_IN = _folder_language()


@functools.cache
def _catalog(lang: str) -> gettext.NullTranslations:
    if lang == "en":
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang])


def _(message: str) -> str:
    """`message` in the learner's language (the English text when no translation exists)."""
    return _catalog(language()).gettext(message)


def in_language(lang: str, message: str) -> str:
    """`message` in `lang`, whoever is asking (a tool that writes notebooks of both languages)."""
    return _catalog(lang).gettext(message)


def ngettext(singular: str, plural: str, n: int) -> str:
    """The singular or plural form for `n`, in the learner's language."""
    return _catalog(language()).ngettext(singular, plural, n)


def N_(message: str) -> str:
    """Mark `message` for translation without translating it yet (strings defined at import time)."""
    return message
