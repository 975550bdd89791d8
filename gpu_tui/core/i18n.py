"""The translation layer: every word a person reads goes through `_` (or `ngettext`).

English is the source text. The catalog in force is installed once at start-up
(config/language.py loads it from the package); until then, and for English, messages come
back as written. Text that tables hold at import time is marked with `N_` for extraction and
translated with `_` where it is shown, so switching the language needs no re-import.

JSON keys and values, action ids, config keys and command names never pass through here.
"""

from __future__ import annotations

import gettext
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

__all__ = [
    "DOMAIN",
    "LANGUAGES",
    "N_",
    "_",
    "active_language",
    "install",
    "language_from_locale",
    "ngettext",
    "normalise_language",
    "pgettext",
    "using",
]

DOMAIN = "gpu_tui"
LANGUAGES = ("en", "zh-CN")
"""The languages gpu-tui speaks; `auto` picks one of them from the locale."""
CHOICES = ("auto", *LANGUAGES)
"""What settings.language, --lang and GPU_TUI_LANG accept."""

_translations: gettext.NullTranslations = gettext.NullTranslations()
_language = "en"


def _(message: str) -> str:
    return _translations.gettext(message)


def N_(message: str) -> str:
    """Marks `message` for the catalog without translating it (tables built at import time)."""
    return message


def ngettext(singular: str, plural: str, n: int) -> str:
    return _translations.ngettext(singular, plural, n)


def pgettext(context: str, message: str) -> str:
    """`message` where the same English word means two things (`stopped`: a job, an instance)."""
    return _translations.pgettext(context, message)


def install(translations: gettext.NullTranslations, language: str) -> None:
    """Make `translations` the catalog in force (start-up, and tests that switch language)."""
    global _translations, _language
    _translations, _language = translations, language


def active_language() -> str:
    return _language


@contextmanager
def using(translations: gettext.NullTranslations, language: str) -> Iterator[None]:
    """Another catalog for the duration of a block (tests)."""
    before = _translations, _language
    install(translations, language)
    try:
        yield
    finally:
        install(*before)


def normalise_language(value: str) -> str | None:
    """A language or locale value (`zh-CN`, `zh_CN.UTF-8`, `zh`, `en_US`, `C`) as one of
    LANGUAGES, or None when gpu-tui does not speak it. The locale itself need not be installed:
    only the value is read."""
    text = value.strip().split(".", 1)[0].split("@", 1)[0].replace("-", "_").lower()
    if not text:
        return None
    if text in ("c", "posix") or text == "en" or text.startswith("en_"):
        return "en"
    if text in ("zh", "zh_cn", "zh_sg", "zh_hans") or text.startswith("zh_hans"):
        return "zh-CN"
    return None


def language_from_locale(environ: Mapping[str, str]) -> str:
    """What the locale asks for: the first of LC_ALL, LC_MESSAGES, LANG that is set decides
    (as the C library reads them); a language gpu-tui does not speak means English."""
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(var, "")
        if value:
            return normalise_language(value) or "en"
    return "en"
