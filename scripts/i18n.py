"""Keep the message catalogs in step with the code (Babel; a developer tool, not needed at run time).

    .venv/bin/python scripts/i18n.py          extract, update the .po files, compile the .mo files
    .venv/bin/python scripts/i18n.py --check  exit 1 when a catalog is stale or incomplete

Messages are taken from every `_("...")`, `N_("...")` and `ngettext("...", "...", n)` in
gpu_tui/, plus argparse's own words (`usage:`, `options`...), which --help shows. English is
the source text. The translations are kept in i18n/<ll_CC>/*.json, one file per area of the
code ({"English": "translation"}, a list for plural forms, "context\u0004English" for a
`pgettext` message), so that work on two areas never
edits the same file; from them this script writes gpu_tui/locale/<ll_CC>/LC_MESSAGES/gpu_tui.po
(for reading and for gettext tools) and the compiled .mo beside it, which ships in the wheel.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import write_po

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gpu_tui"
LOCALE = PACKAGE / "locale"
LANGUAGES = {"zh_CN": "zh-CN"}
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2)}
FIXED_DATE = datetime(2026, 12, 1, tzinfo=UTC)
"""The catalogs' header dates: fixed, so regenerating an unchanged catalog changes no byte."""
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%\([^)]+\)[#0 +-]*\d*(?:\.\d+)?[a-z]|%[#0 +-]*\d*(?:\.\d+)?[sdrfgixX]")


def placeholders(text: str) -> list[str]:
    """`{name}`, `{n:.1f}`, `%s`, `%(prog)s` in a message, sorted: a translation must keep
    exactly the English ones (their order may change with the grammar)."""
    return sorted(_PLACEHOLDER.findall(text.replace("{{", "").replace("}}", "").replace("%%", "")))


def _sources() -> Iterator[tuple[Path, str]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" not in path.parts:
            yield path, str(path.relative_to(ROOT))
    # argparse's own words, as --help prints them
    yield Path(argparse.__file__), "argparse"


def extract() -> Catalog:
    """Every message of the code, as a template (no translations)."""
    template = Catalog(project="gpu-tui", domain="gpu_tui", creation_date=FIXED_DATE, revision_date=FIXED_DATE)
    for path, name in _sources():
        keywords = {"_": None, "ngettext": (1, 2)} if name == "argparse" else KEYWORDS
        for lineno, message, comments, context in extract_from_file("python", str(path), keywords=keywords):
            template.add(message, locations=[(name, lineno)], auto_comments=comments, context=context)
    return template


def po_path(locale: str) -> Path:
    return LOCALE / locale / "LC_MESSAGES" / "gpu_tui.po"


def translations(locale: str) -> dict[str, str | list[str]]:
    """Every translation of the locale's i18n/*.json files (a message in two files: the same
    translation, or an error)."""
    merged: dict[str, str | list[str]] = {}
    for path in sorted((ROOT / "i18n" / locale).glob("*.json")):
        for key, value in json.loads(path.read_text(encoding="utf-8")).items():
            if key in merged and merged[key] != value:
                raise SystemExit(f"{path.name}: {key!r} is translated differently in another file")
            merged[key] = value
    return merged


def updated(locale: str, template: Catalog) -> Catalog:
    """The locale's catalog: every message of `template` with its translation from i18n/, or
    empty (never fuzzy-matched: a guess is worse than English)."""
    catalog = Catalog(
        locale=locale, project="gpu-tui", domain="gpu_tui", creation_date=FIXED_DATE, revision_date=FIXED_DATE
    )
    catalog.update(template, no_fuzzy_matching=True, update_header_comment=False)
    catalog.revision_date = FIXED_DATE
    known = translations(locale)
    for m in catalog:
        if not m.id:
            continue
        key = m.id[0] if isinstance(m.id, tuple) else m.id
        if m.context:  # pgettext: the JSON key is "context\u0004message", as gettext stores it
            key = f"{m.context}\x04{key}"
        value = known.get(key)
        if value is None:
            continue
        if isinstance(m.id, tuple):
            forms = value if isinstance(value, list) else [value]
            m.string = tuple(forms) + (forms[-1],) * (catalog.num_plurals - len(forms))
        else:
            m.string = value if isinstance(value, str) else value[0]
    return catalog


def problems(catalog: Catalog) -> list[str]:
    """Untranslated or fuzzy messages, and placeholders that differ from the English ones."""
    found = []
    for m in catalog:
        if not m.id:
            continue
        ids = m.id if isinstance(m.id, tuple) else (m.id,)
        strs = m.string if isinstance(m.string, tuple) else (m.string,)
        where = m.locations[0][0] if m.locations else "?"
        if m.fuzzy or not all(strs):
            found.append(f"{where}: untranslated: {ids[0]!r}")
            continue
        if any(placeholders(s) != placeholders(ids[-1 if i else 0]) for i, s in enumerate(strs)):
            found.append(f"{where}: placeholders differ: {ids[0]!r} -> {strs[0]!r}")
    return found


def _mo_bytes(catalog: Catalog) -> bytes:
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def main(argv: list[str]) -> int:
    check = "--check" in argv
    template = extract()
    stale = []
    for locale in LANGUAGES:
        catalog = updated(locale, template)
        po = io.BytesIO()
        # no source locations: a message moving down a file must not make the catalog stale
        write_po(po, catalog, width=100, omit_header=False, sort_output=True, include_previous=False, no_location=True)
        mo = _mo_bytes(catalog)
        po_file, mo_file = po_path(locale), po_path(locale).with_suffix(".mo")
        for file, data in ((po_file, po.getvalue()), (mo_file, mo)):
            if not file.exists() or file.read_bytes() != data:
                stale.append(str(file.relative_to(ROOT)))
                if not check:
                    file.parent.mkdir(parents=True, exist_ok=True)
                    file.write_bytes(data)
        for line in problems(catalog):
            print(f"{locale}: {line}")
    if check and stale:
        print("stale (run scripts/i18n.py):", ", ".join(stale))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
