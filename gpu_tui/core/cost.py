"""Money math, kept pure: cost so far and the fleet's burn rate."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["cost_so_far", "burn_rate", "format_money"]


def cost_so_far(hourly_rate: float, uptime_seconds: int | float | None) -> float | None:
    """`hourly_rate * uptime_seconds / 3600`, rounded to cents; None when uptime is unknown."""
    if uptime_seconds is None:
        return None
    return round(hourly_rate * float(uptime_seconds) / 3600.0, 2)


def burn_rate(rates: Iterable[float]) -> float:
    """The fleet's cost per hour: the sum of the rates of instances that are billing."""
    return round(sum(rates), 2)


def format_money(amount: float | None, currency: str) -> str:
    """`¥2.97`; `-` when unknown."""
    if amount is None:
        return "-"
    return f"{currency}{amount:,.2f}"
