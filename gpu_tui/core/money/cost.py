"""Money math, kept pure: cost so far and the fleet's burn rate.

Money is kept per currency and never added across currencies: gpu-tui has no exchange rates.
An instance bills in its own `currency` where the config sets one, else in `settings.currency`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import overload

from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.units import format_money  # re-exported: money is printed by core.units

__all__ = [
    "cost_so_far",
    "burn_rate",
    "currency_of",
    "per_currency",
    "only_in",
    "others_than",
    "format_money",
    "parse_hourly_rate",
    "MAX_HOURLY_RATE",
]

MAX_HOURLY_RATE = 10_000
"""Above this an hourly price is a typo, not a GPU."""


def cost_so_far(hourly_rate: float, uptime_seconds: int | float | None) -> float | None:
    """`hourly_rate * uptime_seconds / 3600`, rounded to cents; None when uptime is unknown."""
    if uptime_seconds is None:
        return None
    return round(hourly_rate * float(uptime_seconds) / 3600.0, 2)


def burn_rate(rates: Iterable[float]) -> float:
    """The fleet's cost per hour: the sum of the rates of instances that are billing."""
    return round(sum(rates), 2)


@overload
def currency_of(own: str | None, default: str) -> str: ...
@overload
def currency_of(own: str | None, default: str | None) -> str | None: ...
def currency_of(own: str | None, default: str | None) -> str | None:
    """The currency an instance bills in: its own where set, else the settings' (`default`).
    The one place this rule is written: a ledger row recorded without a currency (NULL) and a
    config without `currency` both mean settings.currency."""
    return own or default


def per_currency(amounts: Iterable[tuple[str, float]], first: str | None = None) -> list[tuple[str, float]]:
    """`(currency, amount)` pairs summed per currency, never across: `first` (the settings'
    currency) leads when present, the others follow by symbol; each sum rounded to cents."""
    acc: dict[str, float] = {}
    for currency, amount in amounts:
        acc[currency] = acc.get(currency, 0.0) + amount
    order = sorted(acc, key=lambda c: (c != first, c))
    return [(c, round(acc[c], 2)) for c in order]


def only_in(sums: Iterable[tuple[str, float]], currency: str) -> float:
    """The amount in `currency` of per-currency sums (0 when it has none)."""
    return float(sum(amount for c, amount in sums if c == currency))


def others_than(sums: Iterable[tuple[str, float]], currency: str) -> list[tuple[str, float]]:
    """The sums in every currency but `currency` (what a budget in `currency` cannot count)."""
    return [(c, amount) for c, amount in sums if c != currency]


def parse_hourly_rate(text: str) -> float | None:
    """What a user typed as the hourly price: None when empty; InputError when not a number in
    0..MAX_HOURLY_RATE."""
    text = text.strip()
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        raise InputError(_("hourly price {text!r}: give a number like 1.98").format(text=text)) from None
    if not 0 <= value < MAX_HOURLY_RATE:
        raise InputError(_("hourly price {value:g}: must be 0..{most}").format(value=value, most=MAX_HOURLY_RATE))
    return value
