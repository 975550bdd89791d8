"""core.units: one spelling of durations, sizes, clock times, percentages and money for the CLI
and the dashboard; total (None, NaN, negatives never raise), monotonic and width-bounded."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_tui.core import durations
from gpu_tui.core.durations import parse_duration
from gpu_tui.core.money import cost
from gpu_tui.core.units import (
    MISSING,
    format_ago_s,
    format_bytes,
    format_clock_hm,
    format_clock_hms,
    format_duration_exact_s,
    format_duration_s,
    format_eta_s,
    format_iso_utc,
    format_local_date,
    format_local_datetime,
    format_mib_as_gib,
    format_money,
    format_percent,
    format_rate_per_hour,
)

ODD = [None, math.nan, math.inf, -math.inf, -1, -1e300, 0, 1e300]
"""Values no formatter may raise on."""

numbers = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-(2**70), 2**70))


# durations


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "-"),
        (math.nan, "-"),
        (-5, "0s"),
        (0, "0s"),
        (0.9, "0s"),
        (45, "45s"),
        (59.99, "59s"),
        (60, "1m00s"),
        (725, "12m05s"),
        (3599, "59m59s"),
        (3600, "1h00m"),
        (5400, "1h30m"),
        (18420, "5h07m"),
        (86399, "23h59m"),
        (86400, "1d00h"),
        (183600, "2d03h"),
        (100 * 86400, "100d00h"),
    ],
)
def test_duration_reading(seconds: float | None, text: str) -> None:
    assert format_duration_s(seconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (None, "-"),
        (0, "0s"),
        (-3, "0s"),
        (45, "45s"),
        (60, "1m"),
        (125, "2m5s"),
        (5400, "1h30m"),
        (3605, "1h5s"),
        (30 * 86400, "720h"),
        (90.7, "1m30s"),
    ],
)
def test_duration_exact(seconds: float | None, text: str) -> None:
    assert format_duration_exact_s(seconds) == text


def test_durations_module_reexports_the_exact_spelling() -> None:
    assert durations.format_duration is format_duration_exact_s
    assert cost.format_money is format_money


def _reading_seconds(text: str) -> int:
    """`2d03h` -> its lower bound in seconds (what the reading claims at least)."""
    m = re.fullmatch(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
    assert m is not None and text, text
    d, h, mi, s = (int(g or 0) for g in m.groups())
    return ((d * 24 + h) * 60 + mi) * 60 + s


@given(st.floats(min_value=0, max_value=1e9), st.floats(min_value=0, max_value=1e9))
def test_duration_reading_is_monotonic_and_never_overstates(a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    assert _reading_seconds(format_duration_s(lo)) <= _reading_seconds(format_duration_s(hi))
    assert _reading_seconds(format_duration_s(lo)) <= lo


@given(st.floats(min_value=-1e6, max_value=100 * 86400 - 1))
def test_duration_reading_width(seconds: float) -> None:
    assert 2 <= len(format_duration_s(seconds)) <= 6


@given(st.integers(min_value=1, max_value=durations.MAX_DURATION_SECONDS))
def test_exact_duration_reads_back(seconds: int) -> None:
    assert parse_duration(format_duration_exact_s(seconds)) == seconds


@given(numbers)
def test_durations_never_raise(value: float | None) -> None:
    for f in (format_duration_s, format_duration_exact_s, format_ago_s, format_eta_s):
        assert isinstance(f(value), str)


def test_ago_and_eta() -> None:
    assert format_ago_s(185) == "3m05s ago"
    assert format_ago_s(0.2) == format_ago_s(-10) == "just now"
    assert format_ago_s(None) == "-"
    assert format_eta_s(725) == "ETA 12m05s"
    assert format_eta_s(None) == "ETA -"
    noon = datetime(2026, 11, 30, 12, 0, tzinfo=UTC).timestamp()
    assert format_eta_s(725, noon, UTC) == "ETA 12m05s → done 12:12"
    assert format_eta_s(math.inf, noon, UTC) == "ETA -"


# sizes


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (None, "-"),
        (math.nan, "-"),
        (0, "0 B"),
        (1, "1 B"),
        (1023, "1023 B"),
        (1024, "1.0 KiB"),
        (1536, "1.5 KiB"),
        (12 * 1024, "12.0 KiB"),
        (500 * 1024, "500 KiB"),
        (1024**2 - 1, "1.0 MiB"),
        (1024**2, "1.0 MiB"),
        (int(3.2 * 1024**2), "3.2 MiB"),
        (int(99.96 * 1024**2), "100 MiB"),
        (850 * 1024**2, "850 MiB"),
        (1023 * 1024**2, "1023 MiB"),
        (24 * 1024**3, "24.0 GiB"),
        (5 * 1024**5, "5.0 PiB"),
        (2000 * 1024**6, "2000 EiB"),
        (-2048, "-2.0 KiB"),
    ],
)
def test_bytes(n: float | None, text: str) -> None:
    assert format_bytes(n) == text


def _size_value(text: str) -> float:
    number, unit = text.split(" ")
    power = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"].index(unit)
    return float(number) * 1024**power


@given(st.integers(min_value=0, max_value=2**66), st.integers(min_value=0, max_value=2**66))
def test_bytes_monotonic(a: int, b: int) -> None:
    lo, hi = sorted((a, b))
    assert _size_value(format_bytes(lo)) <= _size_value(format_bytes(hi))


@given(st.floats(min_value=0, max_value=1000 * 1024.0**6, exclude_max=True))
def test_bytes_width_and_close(n: float) -> None:
    text = format_bytes(n)
    assert 3 <= len(text) <= 8, text
    assert abs(_size_value(text) - n) <= max(0.5, n * 0.05), text  # within rounding


@given(st.integers(min_value=-(2**66), max_value=-1))
def test_bytes_negative_keeps_sign(n: int) -> None:
    assert format_bytes(n) == "-" + format_bytes(-n)


def test_mib_as_gib() -> None:
    assert format_mib_as_gib(20480) == "20.0"
    assert format_mib_as_gib(24564) == "24.0"
    assert format_mib_as_gib(0) == "0.0"
    assert format_mib_as_gib(None) == "-"


@given(numbers)
def test_sizes_never_raise(value: float | None) -> None:
    assert isinstance(format_bytes(value), str) and isinstance(format_mib_as_gib(value), str)


# ratios and money


def test_percent_and_money() -> None:
    assert format_percent(87.4) == "87%" and format_percent(0) == "0%" and format_percent(None) == "-"
    assert format_percent(None, missing="n/a") == "n/a" and format_percent(math.nan) == "-"
    assert format_money(3.96, "¥") == "¥3.96" and format_money(None, "¥") == "-"
    assert format_money(1234.5, "$") == "$1,234.50" and format_money(math.inf, "$") == "-"
    assert format_rate_per_hour(1.5, "¥") == "¥1.50/h" and format_rate_per_hour(None, "¥") == "-"


@given(numbers)
def test_ratios_and_money_never_raise(value: float | None) -> None:
    for text in (format_percent(value), format_money(value, "¥"), format_rate_per_hour(value, "¥")):
        assert isinstance(text, str)


@given(st.floats(min_value=-1e12, max_value=1e12), st.floats(min_value=-1e12, max_value=1e12))
def test_money_monotonic(a: float, b: float) -> None:
    lo, hi = sorted((a, b))

    def value(text: str) -> float:
        return float(text.removeprefix("¥").replace(",", ""))

    assert value(format_money(lo, "¥")) <= value(format_money(hi, "¥"))


# clock


def test_clock_in_a_given_zone() -> None:
    at = datetime(2026, 11, 30, 10, 19, 50, tzinfo=UTC).timestamp()
    plus8 = timezone(timedelta(hours=8))
    assert format_clock_hm(at, UTC) == "10:19" and format_clock_hm(at, plus8) == "18:19"
    assert format_clock_hms(at, UTC) == "10:19:50"
    assert format_local_date(at, UTC) == "2026-11-30" and format_local_date(at + 14 * 3600, plus8) == "2026-12-01"
    assert format_local_datetime(at, UTC) == "Mon 2026-11-30 10:19"
    assert format_iso_utc(at) == "2026-11-30T10:19:50Z" and format_iso_utc(at + 0.9) == "2026-11-30T10:19:50Z"


def test_clock_defaults_to_local_time() -> None:
    at = 1_800_000_000.0
    assert format_clock_hm(at) == datetime.fromtimestamp(at).strftime("%H:%M")


@given(numbers)
def test_clock_never_raises(value: float | None) -> None:
    for f in (format_clock_hm, format_clock_hms, format_local_date, format_local_datetime, format_iso_utc):
        text = f(value)
        assert text == MISSING or text[0].isalnum()
