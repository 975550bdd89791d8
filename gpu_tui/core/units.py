"""Numbers as gpu-tui prints them, in the CLI and the dashboard alike: durations, bytes, clock
times, percentages and money.

Pure and total: every formatter takes None (and NaN, infinities, negatives) without raising and
prints `-` for what it cannot show. Units are in the function names (`_s` seconds, `_mib` MiB,
an `epoch` is Unix seconds). Styling (colours, Rich `Text`) belongs to the UI, not here.

Two duration spellings, for two jobs:

- `format_duration_s`: a reading, two fields, zero padded, rounded down: `2d03h`, `5h07m`,
  `12m05s`, `45s` (uptime, ETA, idle time, a retry countdown).
- `format_duration_exact_s`: a setting, exact and short, the spelling `parse_duration` reads
  back: `1h30m`, `2m5s`, `720h` (autostop's idle time and check interval, their countdown).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import UTC, datetime, tzinfo

from gpu_tui.core.i18n import N_, _

__all__ = [
    "MISSING",
    "format_duration_s",
    "format_duration_exact_s",
    "format_latency_ms",
    "format_ago_s",
    "format_eta_s",
    "format_bytes",
    "format_mib_as_gib",
    "format_percent",
    "format_money",
    "format_rate_per_hour",
    "format_money_sum",
    "format_rates_per_hour",
    "format_clock_hm",
    "format_clock_hms",
    "format_local_date",
    "format_local_datetime",
    "format_iso_utc",
    "strftime",
]

MISSING = "-"
"""What every formatter prints for an unknown value."""

_BYTE_UNITS = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


def _finite(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return float(value)


# durations


def format_duration_s(seconds: float | None) -> str:
    """A duration as a reading, its two largest fields, rounded down: `2d03h`, `5h07m`, `12m05s`,
    `45s`; `0s` for zero or less, `-` when unknown. At most 6 characters below 100 days."""
    value = _finite(seconds)
    if value is None:
        return MISSING
    s = int(max(0.0, value))
    m, sec = divmod(s, 60)
    h, m = divmod(m, 60)
    d, h = divmod(h, 24)
    if d:
        return f"{d}d{h:02d}h"
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{sec:02d}s"
    return f"{sec}s"


def format_duration_coarse_s(seconds: float | None) -> str:
    """Its largest unit only, for a narrow cell: `2d`, `11h`, `42m` (at least `1m`); `-` unknown."""
    value = _finite(seconds)
    if value is None:
        return MISSING
    value = max(0.0, value)
    if value >= 86400:
        return f"{int(value // 86400)}d"
    if value >= 3600:
        return f"{int(value // 3600)}h"
    return f"{max(1, int(value // 60))}m"


def format_latency_ms(ms: float | None) -> str:
    """A network round trip: `85 ms` below a second, `1.2 s` above; `-` when unknown."""
    value = _finite(ms)
    if value is None:
        return MISSING
    return f"{max(0, round(value))} ms" if value < 1000 else f"{value / 1000:.1f} s"


def format_duration_exact_s(seconds: float | None) -> str:
    """A duration as a setting, exact and shortest: `1h30m`, `15m`, `45s`, `2m5s`, `1h5s`, `720h`
    (hours never roll into days: `parse_duration` reads every output back); `0s` for zero or
    less, `-` when unknown. Fractions of a second are dropped."""
    value = _finite(seconds)
    if value is None:
        return MISSING
    s = int(value)
    if s <= 0:
        return "0s"
    h, rest = divmod(s, 3600)
    m, sec = divmod(rest, 60)
    return "".join(f"{n}{u}" for n, u in ((h, "h"), (m, "m"), (sec, "s")) if n)


def format_ago_s(seconds: float | None) -> str:
    """How long ago: `3m05s ago`, `2d03h ago`; `just now` under a second (or in the future)."""
    value = _finite(seconds)
    if value is None:
        return MISSING
    if value < 1:
        return _("just now")
    return _("{duration} ago").format(duration=format_duration_s(value))


def format_eta_s(seconds: float | None, now: float | None = None, tz: tzinfo | None = None) -> str:
    """`ETA 12m05s`; given `now` (an epoch) also the clock time it is done: `ETA 12m05s → done 14:32`."""
    value = _finite(seconds)
    if value is None:
        return _("ETA {duration}").format(duration=MISSING)
    duration = format_duration_s(value)
    if now is not None and _finite(now) is not None:
        clock = format_clock_hm(now + max(0.0, value), tz)
        return _("ETA {duration} → done {clock}").format(duration=duration, clock=clock)
    return _("ETA {duration}").format(duration=duration)


# sizes


def format_bytes(n: float | None) -> str:
    """A size in bytes, binary units: `850 B`, `1.5 KiB`, `3.2 MiB`, `850 MiB`, `24.0 GiB`;
    bytes whole, larger units with one decimal below 100 and whole from 100 (three figures, within
    5%); `-` when unknown. A negative size keeps its sign. At most 8 characters (9 when negative)
    below 1000 EiB."""
    value = _finite(n)
    if value is None:
        return MISSING
    if value < 0:
        return "-" + format_bytes(-value)
    if round(value) < 1024:
        return f"{value:.0f} B"
    size = value
    for i, unit in enumerate(_BYTE_UNITS):
        size /= 1024
        last = i == len(_BYTE_UNITS) - 1
        if round(size) < 1024 or last:
            if round(size, 1) >= 100:
                return f"{size:.0f} {unit}"
            return f"{size:.1f} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def format_mib_as_gib(mib: float | None) -> str:
    """MiB (as nvidia-smi and /proc/meminfo count) as GiB with one decimal, no unit, for `used/total`
    columns whose header or suffix names it: `20480` -> `20.0`; `-` when unknown."""
    value = _finite(mib)
    return MISSING if value is None else f"{value / 1024:.1f}"


def format_mib(mib: float | None) -> str:
    """MiB with thousands separators and its unit: `15872` -> `15,872 MiB`; `-` when unknown."""
    value = _finite(mib)
    return MISSING if value is None else f"{value:,.0f} MiB"


# ratios and money


def format_percent(value: float | None, *, missing: str = MISSING) -> str:
    """`87%` (rounded to a whole percent); `missing` when unknown."""
    v = _finite(value)
    return missing if v is None else f"{v:.0f}%"


def format_money(amount: float | None, currency: str) -> str:
    """`¥2.97`, `¥1,234.50`; `-` when unknown."""
    v = _finite(amount)
    if v is None:
        return MISSING
    return f"{currency}{v:,.2f}"


def format_rate_per_hour(rate: float | None, currency: str) -> str:
    """An hourly price: `¥1.98/h` (`¥1.98/时` in Chinese); `-` when unknown."""
    money = format_money(rate, currency)
    return MISSING if money == MISSING else _("{money}/h").format(money=money)


def format_money_sum(amounts: Iterable[tuple[str, float | None]]) -> str:
    """Amounts in several currencies, side by side and never added up (gpu-tui converts
    nothing): `¥12.40 + $3.10`; one currency reads as `format_money`; `-` when there is none."""
    parts = [format_money(amount, currency) for currency, amount in amounts]
    return " + ".join(parts) if parts else MISSING


def format_rates_per_hour(rates: Iterable[tuple[str, float | None]]) -> str:
    """Hourly prices in several currencies: `¥1.98/h + $0.69/h`; `-` when there is none."""
    parts = [format_rate_per_hour(rate, currency) for currency, rate in rates]
    return " + ".join(parts) if parts else MISSING


# clock


def _datetime(epoch: float | None, tz: tzinfo | None) -> datetime | None:
    value = _finite(epoch)
    if value is None:
        return None
    try:
        return datetime.fromtimestamp(value, tz) if tz is not None else datetime.fromtimestamp(value)
    except (OverflowError, OSError, ValueError):
        return None


def format_clock_hm(epoch: float | None, tz: tzinfo | None = None) -> str:
    """`14:32` in `tz` (local time by default); `-` when unknown."""
    d = _datetime(epoch, tz)
    return MISSING if d is None else d.strftime("%H:%M")


def format_clock_hms(epoch: float | None, tz: tzinfo | None = None) -> str:
    """`14:32:05` in `tz` (local time by default); `-` when unknown."""
    d = _datetime(epoch, tz)
    return MISSING if d is None else d.strftime("%H:%M:%S")


def format_local_date(epoch: float | None, tz: tzinfo | None = None) -> str:
    """`2026-11-30` (ISO date) in `tz` (local time by default); `-` when unknown."""
    d = _datetime(epoch, tz)
    return MISSING if d is None else d.strftime("%Y-%m-%d")


DATETIME_FORMAT = N_("%a %F %H:%M")
"""`format_local_datetime`'s format, translated (`%-m月%-e日 %H:%M` in Chinese): see `strftime`."""


def format_local_datetime(epoch: float | None, tz: tzinfo | None = None) -> str:
    """`Mon 2026-11-30 14:32` in `tz` (local time by default; `11月30日 14:32` in Chinese); `-`
    when unknown."""
    d = _datetime(epoch, tz)
    return MISSING if d is None else strftime(d, _(DATETIME_FORMAT))


def format_iso_utc(epoch: float | None) -> str:
    """`2026-11-30T10:19:50Z` (UTC, whole seconds); `-` when unknown."""
    d = _datetime(epoch, UTC)
    return MISSING if d is None else d.strftime("%Y-%m-%dT%H:%M:%SZ")


_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_DIRECTIVE = re.compile(r"%(-?)(.)")


def strftime(d: datetime, fmt: str) -> str:
    """`d.strftime(fmt)` for the formats a translation writes, the same on every platform and
    in every C locale: `%Y %m %d %H %M %S`, `%F` (`%Y-%m-%d`), `%e` (the day, space padded),
    `%a` (always `Mon`..`Sun`: the C library's names follow the process locale) and `%%`; a
    `-` drops a number's padding (`%-m月%-e日` -> `12月1日`). Other directives go to the C
    library. The catalog check reads `%d` and `%-d` as placeholders that the English message
    must have as well: where it has none, a translation writes the day as `%e` or `%-e`."""

    def one(m: re.Match[str]) -> str:
        bare, c = m[1] == "-", m[2]
        numbers = {
            "Y": (d.year, "04"),
            "m": (d.month, "02"),
            "d": (d.day, "02"),
            "e": (d.day, "2"),
            "H": (d.hour, "02"),
            "M": (d.minute, "02"),
            "S": (d.second, "02"),
        }
        if c in numbers:
            value, pad = numbers[c]
            return str(value) if bare else format(value, pad)
        if c == "F":
            return f"{d.year:04d}-{d.month:02d}-{d.day:02d}"
        if c == "a":
            return _WEEKDAYS[d.weekday()]
        if c == "%":
            return "%"
        return d.strftime(m[0])

    return _DIRECTIVE.sub(one, fmt)
