"""core.durations: what users type for `--idle` and friends, and the way back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_tui.core.durations import MAX_DURATION_SECONDS, format_duration, parse_duration
from gpu_tui.core.errors import InputError


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("30s", 30),
        ("15m", 900),
        ("1h", 3600),
        ("1h30m", 5400),
        ("2m30s", 150),
        ("1h0m5s", 3605),
        (" 15M ", 900),
        ("90m", 5400),
        ("720h", MAX_DURATION_SECONDS),
    ],
)
def test_parses(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    "text",
    ["", "  ", "15", "1.5h", "15 m", "m", "15min", "1d", "30m1h", "1h1h", "-5m", "0s", "0m", "721h", "15m!", "١٥m"],
)
def test_refuses_with_an_example(text: str) -> None:
    with pytest.raises(InputError) as err:
        parse_duration(text, what="--idle")
    assert "--idle" in err.value.message


def test_bare_number_suggests_minutes() -> None:
    with pytest.raises(InputError, match="did you mean 15m"):
        parse_duration("15")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (-3, "0s"), (45, "45s"), (60, "1m"), (125, "2m5s"), (5400, "1h30m"), (3605, "1h5s")],
)
def test_formats(seconds: int, text: str) -> None:
    assert format_duration(seconds) == text


@given(st.integers(min_value=1, max_value=MAX_DURATION_SECONDS))
def test_round_trip(seconds: int) -> None:
    assert parse_duration(format_duration(seconds)) == seconds
