"""`gpu-tui cost [--json] [--since YYYY-MM-DD]`: billing time and cost per instance, from the ledger.

The ledger is filled by every observation of an instance's uptime (the dashboard, `status`); an
instance removed from the config still shows, by name. Each cost is in the currency its
instance bills in; totals are per currency (`¥12.40 + $3.10`): gpu-tui converts nothing.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import date

from gpu_tui.commands import EXIT_OK, EXIT_USAGE
from gpu_tui.commands.support.cells import format_rows
from gpu_tui.config.paths import Paths
from gpu_tui.config.settings import Settings
from gpu_tui.core.i18n import _
from gpu_tui.core.money.cost import currency_of, format_money, per_currency
from gpu_tui.core.money.ledgermath import NameTotal, midnight
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_money_sum
from gpu_tui.services.ledger import Ledger

__all__ = ["run_cost", "cost_json", "format_cost_table", "parse_since"]

_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def parse_since(text: str) -> date:
    """`YYYY-MM-DD` -> date; ValueError with a message naming the option."""
    try:
        if not _DATE.fullmatch(text):
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise ValueError(
            _("--since wants a date as YYYY-MM-DD (e.g. 2025-01-31), got {text!r}").format(text=text)
        ) from None


def _sums(rows: list[NameTotal], currency: str) -> list[tuple[str, float]]:
    return per_currency(((currency_of(r.currency, currency), r.cost) for r in rows), currency)


def cost_json(rows: list[NameTotal], currency: str) -> dict[str, object]:
    """The CONTRACTS.md `cost --json` shape: money to cents, hours to 2 decimals. `total` is
    in `currency` (settings.currency) only; `totals` has every currency's."""
    totals = {currency: 0.0, **dict(_sums(rows, currency))}  # totals[currency] == total, always
    return {
        "currency": currency,
        "total": totals[currency],
        "totals": totals,
        "instances": [
            {
                "name": r.name,
                "hours": round(r.hours, 2),
                "cost": round(r.cost, 2),
                "currency": currency_of(r.currency, currency),
            }
            for r in rows
        ],
    }


def format_cost_table(rows: list[NameTotal], currency: str, since: date | None) -> str:
    head = _("since {date}").format(date=since.isoformat()) if since else _("all time")
    if not rows:
        return _(
            "{head}: nothing recorded (the ledger fills while the dashboard or `gpu-tui status` sees instances)"
        ).format(head=head)
    table = [(_("NAME"), _("HOURS"), _("COST"))]
    table += [
        (printable(r.name), f"{r.hours:.2f}", format_money(round(r.cost, 2), currency_of(r.currency, currency)))
        for r in rows
    ]
    total = format_money_sum(_sums(rows, currency))
    table.append((_("TOTAL"), f"{sum(r.hours for r in rows):.2f}", total))
    return "\n".join([head, *format_rows(table, right=(1, 2))])


def run_cost(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    since: date | None = None
    if args.since is not None:
        try:
            since = parse_since(args.since)
        except ValueError as exc:
            sys.stderr.write(f"gpu-tui: {exc}\n")
            return EXIT_USAGE
    rows: list[NameTotal] = []
    if paths.ledger_file.exists():  # a read never creates the ledger
        with Ledger(paths.ledger_file) as ledger:
            rows = ledger.totals(None if since is None else midnight(since), currency=settings.settings.currency)
    currency = settings.settings.currency
    if args.json:
        print(json.dumps(cost_json(rows, currency), ensure_ascii=False))
    else:
        print(format_cost_table(rows, currency, since))
    return EXIT_OK
