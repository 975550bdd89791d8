"""Which language is in force (`--lang`, GPU_TUI_LANG, settings, the locale), and its catalog
loaded from the package and installed.

The compiled catalogs (`gpu_tui/locale/<ll_CC>/LC_MESSAGES/gpu_tui.mo`) ship in the wheel, so
a plain `pip install` speaks Chinese; scripts/i18n.py rebuilds them from the `.po` sources.
argparse's own words (`usage:`, `options`) are looked up in the same catalog.
"""

from __future__ import annotations

import argparse
import gettext
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from gpu_tui.core import i18n
from gpu_tui.core.errors import ConfigError

__all__ = ["LOCALE_DIR", "apply_language", "catalog", "resolve_language"]

LOCALE_DIR = Path(str(resources.files("gpu_tui") / "locale"))
_GETTEXT_NAMES = {"zh-CN": "zh_CN"}


def catalog(language: str) -> gettext.NullTranslations:
    """The translations for one of i18n.LANGUAGES; English is the source text itself."""
    if language == "en":
        return gettext.NullTranslations()
    return gettext.translation(i18n.DOMAIN, localedir=LOCALE_DIR, languages=[_GETTEXT_NAMES[language]])


def apply_language(language: str) -> None:
    """Make `language` the one every message is shown in, argparse's included."""
    translations = catalog(language)
    i18n.install(translations, language)
    # argparse looks its words up through the names it imported from gettext at import time;
    # pointing those at our catalog translates `usage:` and `options` without touching the
    # process's locale or environment (children inherit neither change)
    setattr(argparse, "_", translations.gettext)  # noqa: B010 (names argparse does not export)
    setattr(argparse, "ngettext", translations.ngettext)  # noqa: B010


def resolve_language(option: str | None, environ: Mapping[str, str], configured: str = "auto") -> str:
    """The language in force: `--lang`, else GPU_TUI_LANG, else settings.language (pydantic
    has checked it), else the locale; `auto` at any step defers to the next. A value gpu-tui
    does not know is a ConfigError naming it, where it came from, and the choices."""
    for value, where in ((option, "--lang"), (environ.get("GPU_TUI_LANG"), "GPU_TUI_LANG"), (configured, None)):
        if not value or value == "auto":
            continue
        language = i18n.normalise_language(value)
        if language is None:
            raise ConfigError(
                i18n._("{where}: unknown language {value!r}; choose one of {choices}").format(
                    where=where or "settings.language", value=value, choices=", ".join(i18n.CHOICES)
                )
            )
        return language
    return i18n.language_from_locale(environ)
