"""A message in two languages at once: the one in force, for people, and English, for JSON.

JSON values stay English whatever the language (CONTRACTS.md), yet the same sentence is shown
to a person in their language: an environment check's detail, why an instance is unreachable,
why its GPUs cannot be read. `say` formats the message both ways from one call; the English
form also suits the diagnostics log. Mark the message with `N_` where it is written, so that
it is extracted for the catalog.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_tui.core.i18n import _

__all__ = ["Said", "say"]


@dataclass(frozen=True, slots=True)
class Said:
    text: str
    """In the language in force: what a person reads."""
    english: str
    """The English source, formatted: what JSON and the diagnostics log carry."""

    def __str__(self) -> str:
        return self.text


def say(message: str, /, **values: object) -> Said:
    """`message` (English, marked with `N_` by the caller) formatted with `values`, translated
    and in English; a value that is itself a `Said` gives each form its own form."""
    shown = {k: v.text if isinstance(v, Said) else v for k, v in values.items()}
    plain = {k: v.english if isinstance(v, Said) else v for k, v in values.items()}
    return Said(_(message).format(**shown), message.format(**plain))
