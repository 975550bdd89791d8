"""Billing-interval arithmetic for the cost ledger, kept pure (no I/O, no clock: `now` is passed).

An interval is time an instance was billing at one hourly rate; its cost is
`rate * (end - start) / 3600`, in the interval's `currency` (None: `settings.currency`; the
ledger's reads resolve it). Sums are per name and currency: nothing adds two currencies.
Local-time boundaries (midnight, Monday, the 1st) come from a `tzinfo` argument; None means
the machine's local time zone (DST-aware through the C library).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo

__all__ = [
    "Interval",
    "Segment",
    "Extend",
    "Insert",
    "NameTotal",
    "PeriodRow",
    "PeriodStarts",
    "overlap",
    "local_date",
    "midnight",
    "next_midnight",
    "period_starts",
    "split_by_day",
    "plan_observation",
    "totals",
    "per_period",
    "daily_costs",
    "daily_costs_by_currency",
    "currencies",
]

RATE_EPSILON = 1e-9


@dataclass(frozen=True, slots=True)
class Interval:
    """Billing time of `name` from `start` to `end` (epoch seconds) at `rate` per hour in
    `currency` (None: the settings' currency)."""

    name: str
    start: float
    end: float
    rate: float
    currency: str | None = None

    @property
    def seconds(self) -> float:
        return max(0.0, self.end - self.start)

    def cost_between(self, lo: float | None = None, hi: float | None = None) -> float:
        return self.rate * overlap(self.start, self.end, lo, hi) / 3600.0


def overlap(start: float, end: float, lo: float | None = None, hi: float | None = None) -> float:
    """Seconds of [start, end) inside [lo, hi); an open side is unbounded."""
    a = start if lo is None else max(start, lo)
    b = end if hi is None else min(end, hi)
    return max(0.0, b - a)


def local_date(ts: float, tz: tzinfo | None = None) -> date:
    """The calendar date at `ts` in `tz` (None: local time)."""
    return datetime.fromtimestamp(ts, tz).date()


def midnight(d: date, tz: tzinfo | None = None) -> float:
    """Epoch seconds of the start of day `d` in `tz` (None: local time)."""
    if tz is None:
        return datetime.combine(d, time()).timestamp()  # naive = local, mktime handles DST
    return datetime.combine(d, time(), tzinfo=tz).timestamp()


def next_midnight(ts: float, tz: tzinfo | None = None) -> float:
    """The first day boundary strictly after `ts`."""
    return midnight(local_date(ts, tz) + timedelta(days=1), tz)


@dataclass(frozen=True, slots=True)
class PeriodStarts:
    today: float
    week: float  # Monday
    month: float


def period_starts(now: float, tz: tzinfo | None = None) -> PeriodStarts:
    """Starts of today, this week (Monday) and this month, local time."""
    d = local_date(now, tz)
    return PeriodStarts(
        today=midnight(d, tz),
        week=midnight(d - timedelta(days=d.weekday()), tz),
        month=midnight(d.replace(day=1), tz),
    )


def split_by_day(start: float, end: float, tz: tzinfo | None = None) -> list[tuple[date, float]]:
    """[start, end) cut at local midnights: (date, seconds) per day touched, in order."""
    out: list[tuple[date, float]] = []
    t = start
    while t < end:
        cut = min(end, next_midnight(t, tz))
        out.append((local_date(t, tz), cut - t))
        t = cut
    return out


# ---------------------------------------------------------------------------- observations


@dataclass(frozen=True, slots=True)
class Segment:
    """A stored interval of one instance as the ledger sees it when merging an observation."""

    id: int
    boot: float
    start: float
    end: float
    rate: float
    currency: str | None = None


@dataclass(frozen=True, slots=True)
class Extend:
    """Move segment `id`'s end to `end` (and mark it open again)."""

    id: int
    end: float


@dataclass(frozen=True, slots=True)
class Insert:
    """A new segment: same boot at a new rate (or currency), or a new boot."""

    boot: float
    start: float
    end: float
    rate: float
    currency: str | None = None


def plan_observation(
    same_boot: Sequence[Segment],
    boot: float,
    seen: float,
    rate: float,
    *,
    currency: str | None = None,
    prev_end: float | None = None,
    next_start: float | None = None,
) -> Extend | Insert | None:
    """What an observation "up since `boot`, seen at `seen`, billing `rate` in `currency`" changes.

    `same_boot`: the instance's segments whose boot is within tolerance of `boot` (jittery
    uptime readings of one boot); `prev_end`: the latest end of its earlier boots; `next_start`:
    the earliest start of its later boots (only a stale observation has any). Intervals of one
    instance never overlap. None: nothing to change (a stale or repeated observation).
    """
    if next_start is not None:
        seen = min(seen, next_start)
    if same_boot:
        last = max(same_boot, key=lambda s: (s.end, s.id))
        if seen <= last.end:
            return None
        if abs(last.rate - rate) <= RATE_EPSILON and last.currency == currency:
            return Extend(last.id, seen)
        return Insert(last.boot, last.end, seen, rate, currency)  # a new price: a new segment
    start = boot if prev_end is None else max(boot, prev_end)
    if seen < start:
        return None  # inside time already billed to an earlier boot: inconsistent, ignore
    return Insert(boot, start, seen, rate, currency)


# ---------------------------------------------------------------------------- sums


def _key(iv: Interval) -> tuple[str, str]:
    return iv.name, iv.currency or ""


def _currency(key: str) -> str | None:
    return key or None


def currencies(intervals: Iterable[Interval]) -> list[str | None]:
    """The currencies the intervals bill in, each once, sorted by symbol (None first)."""
    return sorted({iv.currency for iv in intervals}, key=lambda c: c or "")


@dataclass(frozen=True, slots=True)
class NameTotal:
    name: str
    seconds: float
    cost: float
    currency: str | None = None
    """What `cost` is in (None: the settings' currency)."""

    @property
    def hours(self) -> float:
        return self.seconds / 3600.0


def totals(intervals: Iterable[Interval], since: float | None = None) -> list[NameTotal]:
    """Billing seconds and cost per instance name and currency (by name, then currency; a name
    that billed in two currencies has two rows), counting only time after `since`."""
    acc: dict[tuple[str, str], list[float]] = {}
    for iv in intervals:
        secs = overlap(iv.start, iv.end, since)
        row = acc.setdefault(_key(iv), [0.0, 0.0])
        row[0] += secs
        row[1] += iv.rate * secs / 3600.0
    return [NameTotal(n, s, c, _currency(cur)) for (n, cur), (s, c) in sorted(acc.items())]


@dataclass(frozen=True, slots=True)
class PeriodRow:
    """One instance's cost today / this week / this month / all time (unrounded), in `currency`."""

    name: str
    today: float
    week: float
    month: float
    all_time: float
    hourly_rate: float  # of its latest interval
    currency: str | None = None


def per_period(intervals: Iterable[Interval], now: float, tz: tzinfo | None = None) -> list[PeriodRow]:
    """Cost per instance and currency in the local calendar periods containing `now`, by name."""
    p = period_starts(now, tz)
    acc: dict[tuple[str, str], list[float]] = {}
    latest: dict[tuple[str, str], tuple[float, float]] = {}
    for iv in intervals:
        key = _key(iv)
        row = acc.setdefault(key, [0.0, 0.0, 0.0, 0.0])
        row[0] += iv.cost_between(p.today)
        row[1] += iv.cost_between(p.week)
        row[2] += iv.cost_between(p.month)
        row[3] += iv.cost_between()
        if key not in latest or iv.end >= latest[key][0]:
            latest[key] = (iv.end, iv.rate)
    return [
        PeriodRow(key[0], today, week, month, all_time, hourly_rate=latest[key][1], currency=_currency(key[1]))
        for key, (today, week, month, all_time) in sorted(acc.items())
    ]


def daily_costs(
    intervals: Iterable[Interval], now: float, days: int = 14, tz: tzinfo | None = None
) -> list[tuple[date, dict[str, float]]]:
    """The last `days` local dates up to today, oldest first, each with its cost per name."""
    today = local_date(now, tz)
    first = today - timedelta(days=days - 1)
    out: dict[date, dict[str, float]] = {first + timedelta(days=i): {} for i in range(days)}
    lo = midnight(first, tz)
    for iv in intervals:
        if iv.end <= lo or iv.rate == 0:
            continue
        for d, secs in split_by_day(max(iv.start, lo), iv.end, tz):
            if d in out:
                per = out[d]
                per[iv.name] = per.get(iv.name, 0.0) + iv.rate * secs / 3600.0
    return list(out.items())


def daily_costs_by_currency(
    intervals: Iterable[Interval], now: float, days: int = 14, tz: tzinfo | None = None
) -> dict[str | None, list[tuple[date, dict[str, float]]]]:
    """`daily_costs` for each currency apart (sorted by symbol, None first): one chart each."""
    ivs = list(intervals)
    return {c: daily_costs([iv for iv in ivs if iv.currency == c], now, days, tz) for c in currencies(ivs)}
