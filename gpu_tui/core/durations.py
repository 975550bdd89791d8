"""Durations as users type them (`30s`, `15m`, `1h`, `1h30m`) and as gpu-tui prints them.

Pure: `parse_duration` turns text into whole seconds or raises InputError with an example;
`format_duration` is its inverse (the shortest spelling, `90` -> `1m30s`): it is
`core.units.format_duration_exact_s`, re-exported here.
"""

from __future__ import annotations

import re

from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.units import format_duration_exact_s as format_duration

__all__ = ["parse_duration", "format_duration", "MAX_DURATION_SECONDS"]

MAX_DURATION_SECONDS = 30 * 24 * 3600
"""Thirty days: longer is a typo, not a plan."""

_UNITS = {"h": 3600, "m": 60, "s": 1}
_FORM = re.compile(r"(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?")


def parse_duration(text: str, *, what: str | None = None) -> int:
    """`30s` / `15m` / `1h` / `1h30m` / `2m30s` -> seconds (>= 1). Units h, m, s in that order,
    each at most once; no bare numbers (is `15` seconds or minutes?), no fractions. `what`
    names the value in the error (an option such as `--idle`; default "duration")."""
    raw = text.strip().lower()
    m = _FORM.fullmatch(raw)
    what = what or _("duration")
    if not raw or m is None or not any(m.groups()):
        hint = _("; did you mean {guess}?").format(guess=f"{raw}m") if raw.isdigit() else ""
        raise InputError(
            _("{what} {text!r}: write it like 30s, 15m, 1h or 1h30m{hint}").format(what=what, text=text, hint=hint)
        )
    seconds = sum(int(n) * _UNITS[u] for n, u in zip(m.groups(), "hms", strict=True) if n)
    if seconds < 1:
        raise InputError(_("{what} {text!r}: must be at least 1s").format(what=what, text=text))
    if seconds > MAX_DURATION_SECONDS:
        raise InputError(
            _("{what} {text!r}: must be at most {most}").format(
                what=what, text=text, most=format_duration(MAX_DURATION_SECONDS)
            )
        )
    return seconds
