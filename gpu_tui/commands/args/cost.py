"""Arguments of `gpu-tui cost` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse

from gpu_tui.core.i18n import _

__all__ = ["add_cost_parser"]


def add_cost_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cost = sub.add_parser("cost", help=_("what each instance has cost, from the local ledger"))
    cost.add_argument("--json", action="store_true", help=_("print JSON (CONTRACTS.md) instead of a table"))
    # checked by the command, so a bad date is one line, not usage + error
    cost.add_argument(
        "--since",
        metavar="YYYY-MM-DD",
        help=_("only billing time after this local date's midnight (default: all time)"),
    )
