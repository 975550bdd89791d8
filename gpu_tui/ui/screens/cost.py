"""`$`: the cost ledger: per instance today / this week / this month / all time, and a plotext bar
chart of the fleet's cost per day over the last 14 days. Reads the ledger every few seconds.
Each instance's money is in its own currency; a mixed fleet gets a total row and a chart per
currency: nothing is converted or added across currencies."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import date

from rich import box
from rich.cells import cell_len
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from gpu_tui.core.i18n import N_, _, ngettext
from gpu_tui.core.money.cost import currency_of, per_currency
from gpu_tui.core.money.ledgermath import PeriodRow
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_local_datetime, format_money, format_rate_per_hour
from gpu_tui.services.billing import Billing, LedgerError
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["CostScreen", "cost_table", "day_chart"]

DAYS = 14
PERIODS = (N_("today"), N_("week"), N_("month"), N_("all time"))


def cost_table(rows: list[PeriodRow], currency: str, width: int) -> Table:
    """One row per instance (by name; per currency it billed in) and a total row (one per
    currency, settings.currency's first); money to cents. `currency`: settings.currency, for rows without one."""

    def money(v: float, cur: str | None) -> str:
        return format_money(round(v, 2), currency_of(cur, currency))

    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, width=min(width, 80))
    t.add_column(_("instance"), overflow="ellipsis", no_wrap=True, ratio=1, min_width=8)
    t.add_column(_("rate"), justify="right", no_wrap=True)
    for head in PERIODS:
        t.add_column(_(head), justify="right", no_wrap=True)
    for r in rows:
        t.add_row(
            printable(r.name),
            format_rate_per_hour(r.hourly_rate, currency_of(r.currency, currency)),
            money(r.today, r.currency),
            money(r.week, r.currency),
            money(r.month, r.currency),
            money(r.all_time, r.currency),
        )
    if len(rows) > 1:
        t.add_section()
        order = [c for c, _v in per_currency(((currency_of(r.currency, currency), 0.0) for r in rows), currency)]
        for cur in order:  # one total row per currency: columns stay narrow, nothing is added across
            label = _("total") if len(order) == 1 else _("total in {currency}").format(currency=cur)
            t.add_row(
                Text(label, style="bold"),
                "",
                *(
                    Text(
                        money(sum(getattr(r, f) for r in rows if currency_of(r.currency, currency) == cur), cur),
                        style="bold",
                    )
                    for f in ("today", "week", "month", "all_time")
                ),
            )
    return t


class PlotLabels:
    """Titles and axis labels for plotext, which gives every character one cell: a label with
    wide characters (Chinese) is laid out as a stand-in of the same width in cells, made of
    private-use characters, and swapped back into plotext's output."""

    _FIRST = 0xE000

    def __init__(self) -> None:
        self._swaps: list[tuple[str, str]] = []

    def __call__(self, text: str) -> str:
        if cell_len(text) == len(text):
            return text
        mark = chr(self._FIRST + len(self._swaps)) * cell_len(text)
        self._swaps.append((mark, text))
        return mark

    def restore(self, built: str) -> str:
        for mark, text in self._swaps:
            built = built.replace(mark, text)
        # a stand-in plotext shortened for want of room: drop what is left of it
        return "".join(c for c in built if not self._FIRST <= ord(c) < self._FIRST + len(self._swaps))


def day_chart(days: list[tuple[date, dict[str, float]]], currency: str, *, width: int, height: int) -> Text:
    """The fleet's cost per local day as vertical bars, labelled by day of month."""
    import plotext as plt  # on first use: a dashboard that never plots never pays its import

    plt.clf()
    plt.limit_size(False, False)
    plt.plotsize(max(30, width), max(6, height))
    plt.theme("clear")
    text = PlotLabels()
    n = len(days)
    plt.title(
        text(
            ngettext("{currency} per day, last {n} day", "{currency} per day, last {n} days", n).format(
                currency=currency, n=n
            )
        )
    )
    labels = [f"{d.day:02d}" for d, _per in days]
    values = [round(sum(per.values()), 2) for _day, per in days]
    plt.bar(labels, values, color="green", width=0.6)
    if not any(values):
        plt.ylim(0, 1)
    return Text.from_ansi(text.restore(plt.build()).rstrip("\n"))


class CostScreen(Screen[None]):
    """The ledger's view. Not bound to a key here: the dashboard pushes it (`$`)."""

    BINDINGS = [Binding("escape,q,dollar_sign", "app.pop_screen", N_("Back"))]
    DEFAULT_CSS = """
    CostScreen Static { height: auto; }
    """
    REFRESH_SECONDS = 5.0

    def __init__(self, billing: Billing, currency: str, clock: Callable[[], float] = time.time) -> None:
        super().__init__()
        translate_bindings(self)
        self._billing = billing
        self._currency = currency
        self._clock = clock

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="cost-head")
            yield Static(id="cost-table")
            yield Static(id="cost-chart")
        yield Footer()

    def on_mount(self) -> None:
        self.redraw()
        self.set_interval(self.REFRESH_SECONDS, self.redraw)

    def redraw(self) -> None:
        now = self._clock()
        width = max(40, min(self.size.width, 200) - 2)
        head = Text(_("cost"), style="bold")
        head.append(f"  {format_local_datetime(now)}", style="dim")
        try:
            rows = self._billing.per_period(now, currency=self._currency)  # after what it held back
            charts = self._billing.daily_by_currency(now, DAYS, currency=self._currency)
        except LedgerError as exc:
            self.query_one("#cost-head", Static).update(head.append(f"\n{exc.message}", style="bold red"))
            return
        self.query_one("#cost-head", Static).update(head)
        table = self.query_one("#cost-table", Static)
        chart = self.query_one("#cost-chart", Static)
        if not rows:
            table.update(Text(_("nothing recorded yet: the ledger fills while instances are seen up"), style="dim"))
            chart.update("")
            return
        tab = cost_table(rows, self._currency, width)
        table.update(tab)
        console = self.app.console
        table_lines = len(console.render_lines(tab, console.options.update_width(width), pad=False))
        used = 1 + table_lines + 1  # head, table, footer
        height = max(8, self.size.height - used)
        order = sorted(charts, key=lambda c: (c != self._currency, c or ""))  # settings' currency first
        if len(order) <= 1:
            days = charts[order[0]] if order else []
            chart.update(
                day_chart(days, currency_of(order[0] if order else None, self._currency), width=width, height=height)
            )
            return
        parts = [
            day_chart(charts[c], currency_of(c, self._currency), width=width, height=max(8, height // len(order)))
            for c in order
        ]
        chart.update(Text("\n").join(parts))
