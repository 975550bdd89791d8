"""Money in several currencies (core/money/cost.py, core/units.py, core/money/ledgermath.py): kept and shown
per currency, never added across currencies (gpu-tui has no exchange rates)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gpu_tui.core.money.cost import currency_of, only_in, others_than, per_currency
from gpu_tui.core.money.ledgermath import (
    Extend,
    Insert,
    Interval,
    Segment,
    currencies,
    daily_costs,
    daily_costs_by_currency,
    per_period,
    plan_observation,
    totals,
)
from gpu_tui.core.units import format_money, format_money_sum, format_rate_per_hour, format_rates_per_hour

T0 = 1_750_000_000.0


def test_an_instance_bills_in_its_own_currency_else_the_settings() -> None:
    assert currency_of("$", "¥") == "$" and currency_of(None, "¥") == "¥"


def test_sums_are_per_currency_with_the_settings_one_first() -> None:
    pairs = [("$", 0.69), ("¥", 1.98), ("$", 0.5), ("€", 1.0)]
    assert per_currency(pairs, "¥") == [("¥", 1.98), ("$", 1.19), ("€", 1.0)]
    assert per_currency(pairs, "€") == [("€", 1.0), ("$", 1.19), ("¥", 1.98)]
    assert per_currency([], "¥") == []
    sums = per_currency(pairs, "¥")
    assert only_in(sums, "¥") == 1.98 and only_in(sums, "£") == 0.0
    assert others_than(sums, "¥") == [("$", 1.19), ("€", 1.0)]


def test_mixed_money_reads_side_by_side() -> None:
    assert format_money_sum([("¥", 12.4), ("$", 3.1)]) == "¥12.40 + $3.10"
    assert format_rates_per_hour([("¥", 1.98), ("$", 0.69)]) == "¥1.98/h + $0.69/h"
    assert format_money_sum([]) == "-" and format_rates_per_hour([]) == "-"


@given(st.floats(allow_nan=True, allow_infinity=True) | st.none())
def test_one_currency_reads_as_before(amount: float | None) -> None:
    """The one-currency fleet's text is unchanged (the money snapshots rely on it)."""
    assert format_money_sum([("¥", amount)]) == format_money(amount, "¥")
    assert format_rates_per_hour([("¥", amount)]) == format_rate_per_hour(amount, "¥")


def test_the_mixed_fleet_of_the_issue_is_never_one_number() -> None:
    """One AutoDL (¥1.98/h) and one RunPod ($0.69/h): never "¥2.67/h"."""
    text = format_rates_per_hour(per_currency([("¥", 1.98), ("$", 0.69)], "¥"))
    assert text == "¥1.98/h + $0.69/h" and "2.67" not in text


def test_a_new_currency_on_the_same_boot_is_a_new_segment() -> None:
    seg = Segment(1, T0, T0, T0 + 60, 2.0, None)
    assert plan_observation([seg], T0, T0 + 120, 2.0) == Extend(1, T0 + 120)
    assert plan_observation([seg], T0, T0 + 120, 2.0, currency="$") == Insert(T0, T0 + 60, T0 + 120, 2.0, "$")
    assert plan_observation([], T0, T0 + 10, 0.69, currency="$") == Insert(T0, T0, T0 + 10, 0.69, "$")


def test_sums_split_by_name_and_currency() -> None:
    ivs = [
        Interval("a", T0, T0 + 3600, 1.98, "¥"),
        Interval("b", T0, T0 + 3600, 0.69, "$"),
        Interval("b", T0 + 3600, T0 + 7200, 5.0, "¥"),  # b re-priced in yuan
    ]
    assert [(t.name, t.currency, t.cost) for t in totals(ivs)] == [("a", "¥", 1.98), ("b", "$", 0.69), ("b", "¥", 5.0)]
    rows = per_period(ivs, T0 + 7200)
    assert [(r.name, r.currency, r.hourly_rate) for r in rows] == [("a", "¥", 1.98), ("b", "$", 0.69), ("b", "¥", 5.0)]
    assert currencies(ivs) == ["$", "¥"]
    charts = daily_costs_by_currency(ivs, T0 + 7200, 2)
    assert sorted(charts) == ["$", "¥"]
    assert sum(sum(per.values()) for _d, per in charts["$"]) == 0.69
    assert round(sum(sum(per.values()) for _d, per in charts["¥"]), 2) == 6.98


@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.floats(0, 86400), st.floats(0, 50), st.sampled_from([None, "$", "¥"])),
        max_size=12,
    )
)
def test_per_currency_charts_add_up_to_the_one_chart(rows: list[tuple[str, float, float, str | None]]) -> None:
    """Splitting by currency only moves money between charts: each day's total over every
    currency is the old single chart's (so a one-currency ledger draws what it drew before)."""
    ivs = [Interval(n, T0 - length, T0, rate, cur) for n, length, rate, cur in rows]
    one = daily_costs(ivs, T0, 3)
    split = daily_costs_by_currency(ivs, T0, 3)
    for i, (day, per) in enumerate(one):
        parts = [charts[i] for charts in split.values()]
        assert all(d == day for d, _per in parts)
        assert abs(sum(per.values()) - sum(sum(p.values()) for _d, p in parts)) < 1e-6
    if all(cur is None for *_rest, cur in rows) and rows:
        assert split == {None: one}


def test_the_status_table_shows_each_instance_in_its_currency() -> None:
    from gpu_tui.commands.status_cmd import format_table
    from gpu_tui.core.models import HostStats
    from gpu_tui.services.status import InstanceStatus

    up = HostStats(taken_at=T0, uptime_seconds=7200)
    statuses = [
        InstanceStatus("autodl-4090", 1.98, online=True, stats=up),
        InstanceStatus("runpod-a40", 0.69, online=True, stats=up),
    ]
    rows = {line.split()[0]: line.split() for line in format_table(statuses, "¥", {"runpod-a40": "$"}).splitlines()}
    assert rows["autodl-4090"][-2:] == ["¥1.98/h", "¥3.96"]
    assert rows["runpod-a40"][-2:] == ["$0.69/h", "$1.38"]
    one = {line.split()[0]: line.split() for line in format_table(statuses, "¥").splitlines()}
    assert one["runpod-a40"][-2:] == ["¥0.69/h", "¥1.38"]  # without a currency of its own: settings'
