"""The CLI's subcommand table names real functions, and each parser's command is in it."""

from __future__ import annotations

import importlib

import pytest

from gpu_tui.cli import COMMANDS, build_parser
from gpu_tui.core.errors import InputError
from gpu_tui.core.money.cost import parse_hourly_rate


def test_every_subcommand_resolves_to_a_function() -> None:
    for name, (module, function) in COMMANDS.items():
        assert callable(getattr(importlib.import_module(f"gpu_tui.commands.{module}"), function)), name
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert set(sub.choices) - set(COMMANDS) == {"demo", "local"}  # the dashboard's own


@pytest.mark.parametrize(("text", "value"), [("", None), (" 1.98 ", 1.98), ("0", 0.0)])
def test_hourly_rate(text: str, value: float | None) -> None:
    assert parse_hourly_rate(text) == value


@pytest.mark.parametrize(("text", "message"), [("cheap", "give a number"), ("-1", "0..10000"), ("1e9", "0..10000")])
def test_hourly_rate_refused(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_hourly_rate(text)
