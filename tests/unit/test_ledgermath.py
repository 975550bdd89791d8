"""Pure billing-interval arithmetic (gpu_tui/core/money/ledgermath.py): examples and properties."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tui.core.money.ledgermath import (
    Extend,
    Insert,
    Interval,
    Segment,
    daily_costs,
    local_date,
    midnight,
    overlap,
    per_period,
    period_starts,
    plan_observation,
    split_by_day,
    totals,
)

BERLIN = ZoneInfo("Europe/Berlin")
SHANGHAI = timezone(timedelta(hours=8))
TOL = 90.0
T0 = datetime(2025, 3, 12, 9, 0, tzinfo=SHANGHAI).timestamp()  # a Wednesday


# ------------------------------------------------------------------------------ examples


def test_overlap() -> None:
    assert overlap(10, 20) == 10
    assert overlap(10, 20, 15) == 5
    assert overlap(10, 20, None, 12) == 2
    assert overlap(10, 20, 25) == 0
    assert overlap(10, 20, 0, 5) == 0


def test_interval_cost_is_rate_times_hours() -> None:
    iv = Interval("a", 0, 5400, 1.98)
    assert iv.seconds == 5400 and abs(iv.cost_between() - 2.97) < 1e-9
    assert abs(iv.cost_between(3600) - 0.99) < 1e-9


def test_split_by_day_across_dst_in_berlin() -> None:
    # 2024-03-31 has 23 hours in Berlin, 2024-10-27 has 25
    for d, hours in ((date(2024, 3, 31), 23), (date(2024, 10, 27), 25)):
        start = midnight(d, BERLIN)
        parts = split_by_day(start - 3600, midnight(d + timedelta(days=1), BERLIN) + 60, BERLIN)
        assert parts == [(d - timedelta(days=1), 3600), (d, hours * 3600), (d + timedelta(days=1), 60)]


def test_period_starts_are_local_midnight_monday_and_the_first() -> None:
    p = period_starts(T0, SHANGHAI)
    assert p.today == datetime(2025, 3, 12, tzinfo=SHANGHAI).timestamp()
    assert p.week == datetime(2025, 3, 10, tzinfo=SHANGHAI).timestamp()  # Monday
    assert p.month == datetime(2025, 3, 1, tzinfo=SHANGHAI).timestamp()
    # the same instant is already the 12th in Shanghai but still the 11th in... UTC-10
    instant = datetime(2025, 3, 12, 1, tzinfo=SHANGHAI).timestamp()
    assert local_date(instant, timezone(timedelta(hours=-10))) == date(2025, 3, 11)


def test_a_jittery_reading_of_the_same_boot_extends() -> None:
    seg = Segment(1, boot=1000.0, start=1000.0, end=5000.0, rate=2.0)
    assert plan_observation([seg], boot=1040.0, seen=6000.0, rate=2.0) == Extend(1, 6000.0)
    assert plan_observation([seg], boot=960.0, seen=4000.0, rate=2.0) is None  # stale


def test_a_new_rate_starts_a_segment_where_the_old_one_was_last_seen() -> None:
    seg = Segment(1, boot=1000.0, start=1000.0, end=5000.0, rate=2.0)
    assert plan_observation([seg], boot=1010.0, seen=6000.0, rate=3.0) == Insert(1000.0, 5000.0, 6000.0, 3.0)


def test_a_new_boot_never_overlaps_the_previous_one() -> None:
    after = plan_observation([], boot=9000.0, seen=9500.0, rate=2.0, prev_end=8000.0)
    assert after == Insert(9000.0, 9000.0, 9500.0, 2.0)
    overlapping = plan_observation([], boot=7000.0, seen=9500.0, rate=2.0, prev_end=8000.0)
    assert overlapping == Insert(7000.0, 8000.0, 9500.0, 2.0)
    assert plan_observation([], boot=7000.0, seen=7500.0, rate=2.0, prev_end=8000.0) is None
    # a stale reading of an old boot never reaches into the next boot's time
    seg = Segment(1, boot=1000.0, start=1000.0, end=5000.0, rate=2.0)
    assert plan_observation([seg], boot=1000.0, seen=9000.0, rate=2.0, next_start=7000.0) == Extend(1, 7000.0)


def test_totals_since_and_per_period() -> None:
    day = 86400.0
    ivs = [
        Interval("a", T0 - 40 * day, T0 - 40 * day + 3600, 2.0),  # last month
        Interval("a", T0 - 2 * day, T0 - 2 * day + 7200, 2.0),  # Monday, this week
        Interval("b", T0 - 1800, T0, 4.0),  # this morning
        Interval("gone", T0 - 3 * day, T0 - 3 * day + 3600, 1.0),  # Sunday: last week, this month
    ]
    all_time = {t.name: (t.hours, t.cost) for t in totals(ivs)}
    assert all_time == {"a": (3.0, 6.0), "b": (0.5, 2.0), "gone": (1.0, 1.0)}
    since = {t.name: t.cost for t in totals(ivs, midnight(date(2025, 3, 10), SHANGHAI))}
    assert since == {"a": 4.0, "b": 2.0, "gone": 0.0}
    rows = {r.name: r for r in per_period(ivs, T0, SHANGHAI)}
    assert (rows["a"].today, rows["a"].week, rows["a"].month, rows["a"].all_time) == (0, 4.0, 4.0, 6.0)
    assert (rows["b"].today, rows["b"].week, rows["b"].month, rows["b"].all_time) == (2.0, 2.0, 2.0, 2.0)
    assert (rows["gone"].today, rows["gone"].week, rows["gone"].month) == (0, 0, 1.0)
    days = daily_costs(ivs, T0, 14, SHANGHAI)
    assert len(days) == 14 and days[-1][0] == date(2025, 3, 12) and days[0][0] == date(2025, 2, 27)
    assert days[-1][1] == {"b": 2.0} and days[-3][1] == {"a": 4.0} and days[-4][1] == {"gone": 1.0}


def test_an_interval_across_midnight_is_split_between_days() -> None:
    mid = midnight(date(2025, 3, 12), SHANGHAI)
    ivs = [Interval("a", mid - 1800, mid + 5400, 2.0)]
    days = dict(daily_costs(ivs, T0, 3, SHANGHAI))
    assert days[date(2025, 3, 11)] == {"a": 1.0} and days[date(2025, 3, 12)] == {"a": 3.0}
    assert per_period(ivs, T0, SHANGHAI)[0].today == 3.0


# ------------------------------------------------------------------------------ properties

zones = st.sampled_from(
    [UTC, SHANGHAI, timezone(timedelta(hours=-9, minutes=-30)), BERLIN, ZoneInfo("America/New_York")]
)
times = st.floats(min_value=1.5e9, max_value=2.0e9, allow_nan=False)


@given(times, st.floats(min_value=0, max_value=90 * 86400), zones)
def test_split_by_day_covers_the_interval_exactly(start: float, length: float, tz) -> None:
    end = start + length
    parts = split_by_day(start, end, tz)
    assert abs(sum(s for _, s in parts) - (end - start)) < 1e-3
    assert all(0 < s <= 25 * 3600 for _, s in parts)
    assert [d for d, _ in parts] == [local_date(start, tz) + timedelta(days=i) for i in range(len(parts))]


interval_lists = st.lists(
    st.builds(
        lambda name, start, length, rate: Interval(name, start, start + length, rate),
        st.sampled_from(["a", "b", "c"]),
        times,
        st.floats(min_value=0, max_value=30 * 86400),
        st.sampled_from([0.0, 1.98, 2.5, 12.0]),
    ),
    max_size=12,
)


@given(interval_lists, times)
def test_time_before_and_after_since_adds_up(ivs: list[Interval], since: float) -> None:
    after = {t.name: t for t in totals(ivs, since)}
    for t in totals(ivs):
        before = sum(overlap(iv.start, iv.end, None, since) for iv in ivs if iv.name == t.name)
        assert abs(after[t.name].seconds + before - t.seconds) < 1e-3


@given(interval_lists, times, zones)
def test_periods_nest_and_days_add_up(ivs: list[Interval], now: float, tz) -> None:
    ivs = [Interval(iv.name, min(iv.start, now), min(iv.end, now), iv.rate) for iv in ivs]  # the past only
    p = period_starts(now, tz)
    assert p.month <= p.today and p.week <= p.today <= now
    for r in per_period(ivs, now, tz):
        assert r.today <= r.week + 1e-9 and r.today <= r.month + 1e-9 and max(r.week, r.month) <= r.all_time + 1e-9
    days = daily_costs(ivs, now, 14, tz)
    lo = midnight(days[0][0], tz)
    expected = sum(iv.cost_between(lo) for iv in ivs)
    assert abs(sum(sum(per.values()) for _, per in days) - expected) < 1e-6
    assert abs(sum(days[-1][1].values()) - sum(r.today for r in per_period(ivs, now, tz))) < 1e-6


def _apply(store: list[Segment], boot: float, seen: float, rate: float) -> None:
    """The ledger's merge step over an in-memory list (what services/ledger.py does in SQL)."""
    same = [s for s in store if abs(s.boot - boot) <= TOL]
    prev = [s.end for s in store if s.boot < boot - TOL]
    nxt = [s.start for s in store if s.boot > boot + TOL]
    plan = plan_observation(same, boot, seen, rate, prev_end=max(prev, default=None), next_start=min(nxt, default=None))
    if isinstance(plan, Extend):
        i = next(i for i, s in enumerate(store) if s.id == plan.id)
        store[i] = Segment(plan.id, store[i].boot, store[i].start, plan.end, store[i].rate)
    elif isinstance(plan, Insert):
        store.append(Segment(len(store) + 1, plan.boot, plan.start, plan.end, plan.rate))


sessions = st.lists(
    st.tuples(
        st.floats(min_value=400, max_value=86400),  # gap before this boot, s
        st.floats(min_value=400, max_value=3 * 86400),  # how long it stays up, s
        st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=8),  # when it is seen (fractions)
        st.lists(st.floats(min_value=-40, max_value=40), min_size=8, max_size=8),  # uptime jitter per reading
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=200)
@given(sessions)
def test_jittery_observations_of_several_boots_give_one_interval_per_boot(plan: list) -> None:
    store: list[Segment] = []
    t = 1.7e9
    expected = 0.0
    for gap, up, fractions, jitter in plan:
        boot = t + gap
        seen_times = sorted(boot + 40 + f * (up - 40) for f in fractions)  # uptime >= 0
        for seen, j in zip(seen_times, jitter, strict=False):  # 8 jitters: one per reading is used
            _apply(store, boot + j, seen, 2.0)  # boot estimate off by the jitter
        first_boot = boot + jitter[0]
        expected += seen_times[-1] - first_boot
        t = boot + up
    assert len(store) == len(plan)
    assert abs(sum(s.end - s.start for s in store) - expected) < 1e-3
    ordered = sorted(store, key=lambda s: s.start)
    assert all(a.end <= b.start for a, b in zip(ordered, ordered[1:], strict=False))
