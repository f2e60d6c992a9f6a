"""The learner's language: every message labkit shows, through gettext; English unless Chinese is chosen.

Below every wing (any wing may import it). `_("...")` translates now; `N_("...")` only marks a string
defined at import time (a table of meanings) for extraction, to be translated with `_()` where shown.
The catalog is `labkit/locale/<lang>/LC_MESSAGES/labkit.po`, compiled to `.mo` by `python tools/i18n.py`.
"""

from __future__ import annotations

import functools
import gettext
import os
from collections.abc import Iterable
from pathlib import Path

from labkit.errors import ConfigError
from labkit.server_contract import LANGUAGE_ENV

__all__ = ["LANGUAGES", "N_", "_", "clauses", "folder_language", "in_language", "language", "listing", "ngettext"]

LANGUAGES = ("en", "zh_CN")
DOMAIN = "labkit"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
_ALIASES = {
    "en": "en",
    "en_us": "en",
    "en_gb": "en",
    "c": "en",
    "zh": "zh_CN",
    "zh_cn": "zh_CN",
    "zh_hans": "zh_CN",
    "zh_hans_cn": "zh_CN",
}
# The generated Chinese notebooks live in zh-CN/notebooks/ and zh-CN/solutions/; a kernel starts in its own folder.
_CHINESE_FOLDER = "zh-CN"


def language() -> str:
    """The language labkit speaks: `LABKIT_LANG` if set, else zh_CN in the `zh-CN/` tree, else en (notebook 00)."""
    chosen = os.environ.get(LANGUAGE_ENV, "").strip()
    if chosen:
        key = chosen.split(".")[0].replace("-", "_").lower()
        if key not in _ALIASES:
            raise ConfigError(
                f"{LANGUAGE_ENV}={chosen!r} is not a language of the lab; use one of {', '.join(LANGUAGES)}"
            )
        return _ALIASES[key]
    return _STARTED_IN


def folder_language(folder: Path) -> str:
    """The language of the notebooks in `folder`: zh_CN for `zh-CN/` and the folders in it, else en."""
    # Only the last two parts count: an English lesson stays English in a clone kept under a folder named zh-CN.
    return "zh_CN" if _CHINESE_FOLDER in folder.parts[-2:] else "en"


def _folder_language() -> str:
    try:
        return folder_language(Path.cwd())
    except OSError:  # the working folder was removed under us
        return "en"


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


def listing(items: Iterable[object]) -> str:
    """`items` as a list inside a sentence, with the learner's language's separator (Chinese takes `、`)."""
    # i18n: the separator between the items of a list inside a sentence ("a, b, c"); Chinese uses the enumeration comma
    return _(", ").join(map(str, items))


def clauses(items: Iterable[object]) -> str:
    """`items` as clauses of one sentence ("a; b"), with the learner's language's semicolon (Chinese takes `；`)."""
    # i18n: the separator between the clauses of one sentence ("a; b"); Chinese uses the full-width semicolon
    return _("; ").join(map(str, items))


def N_(message: str) -> str:
    """Mark `message` for translation without translating it yet (strings defined at import time)."""
    return message
