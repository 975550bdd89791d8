"""The cost screen (gpu_tui/ui/screens/cost.py) in a small app of its own: a real ledger file, a
fixed clock, 80x24."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from rich.console import Console
from textual.app import App
from textual.containers import VerticalScroll
from textual.widgets import Static

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.services.billing import Billing
from gpu_tui.services.ledger import Ledger
from gpu_tui.ui.screens.cost import CostScreen

NOW = datetime(2025, 3, 12, 15, 0).timestamp()  # local time, a Wednesday afternoon
HOUR, DAY = 3600.0, 86400.0


class Host(App[None]):
    def __init__(self, billing: Billing, clock) -> None:
        super().__init__()
        self.billing, self.clock = billing, clock

    def on_mount(self) -> None:
        self.push_screen(CostScreen(self.billing, "¥", self.clock))


def text_of(app: App, wid: str) -> str:
    console = Console(width=app.size.width, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(app.screen.query_one(f"#{wid}", Static).content)
    return console.export_text()


def fill(ledger: Ledger) -> None:
    ledger.observe("autodl-4090", 2 * HOUR, 1.98, NOW)  # 2 h today
    ledger.observe("h100-box", 5 * HOUR, 10.0, NOW - 2 * DAY)  # Monday
    ledger.observe("gone-from-config", 3 * HOUR, 2.0, NOW - 20 * DAY)  # February: all time only


async def test_today_week_month_all_time_and_the_chart_fit_80x24(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        fill(ledger)
    app = Host(Billing(tmp_path / "ledger.sqlite3"), lambda: NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, CostScreen)
        rows = {line.split()[0]: line.split()[1:] for line in text_of(app, "cost-table").splitlines() if line.strip()}
        assert rows["instance"] == ["rate", "today", "week", "month", "all", "time"]
        assert rows["autodl-4090"] == ["¥1.98/h", "¥3.96", "¥3.96", "¥3.96", "¥3.96"]
        assert rows["h100-box"] == ["¥10.00/h", "¥0.00", "¥50.00", "¥50.00", "¥50.00"]
        assert rows["gone-from-config"] == ["¥2.00/h", "¥0.00", "¥0.00", "¥0.00", "¥6.00"]
        assert rows["total"] == ["¥3.96", "¥53.96", "¥53.96", "¥59.96"]
        chart = text_of(app, "cost-chart")
        assert "¥ per day, last 14 days" in chart and "█" in chart
        assert all(len(line) <= 80 for line in chart.splitlines())
        scroll = app.screen.query_one(VerticalScroll)
        assert scroll.max_scroll_y == 0 and scroll.max_scroll_x == 0  # it all fits on one screen
        await pilot.press("escape")
        assert not isinstance(app.screen, CostScreen)


async def test_it_follows_the_ledger(tmp_path: Path) -> None:
    billing = Billing(tmp_path / "ledger.sqlite3", hold_seconds=30)
    box = InstanceConfig(name="box", host="box.example", hourly_rate=2.0)
    now = [NOW]
    app = Host(billing, lambda: now[0])
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "nothing recorded yet" in text_of(app, "cost-table")
        billing.seen_up(box, HOUR, NOW)
        billing.seen_up(box, HOUR + 10, NOW + 10)  # held back: the screen's read writes it first
        with Ledger(tmp_path / "ledger.sqlite3") as other:
            assert [iv.end for iv in other.intervals()] == [NOW]  # it was held
        now[0] = NOW + 10
        app.screen.redraw()  # type: ignore[attr-defined]
        await pilot.pause()
        (row,) = [ln.split() for ln in text_of(app, "cost-table").splitlines() if ln.strip().startswith("box")]
        assert row[2] == "¥2.01"


async def test_an_unreadable_ledger_is_a_message_not_a_crash(tmp_path: Path) -> None:
    bad = tmp_path / "ledger.sqlite3"
    bad.write_bytes(b"garbage" * 1000)
    app = Host(Billing(bad), lambda: NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert "cannot read" in text_of(app, "cost-head")


async def test_a_mixed_ledger_keeps_each_currency_apart(tmp_path: Path) -> None:
    """An AutoDL box in yuan (recorded without a currency: settings') and a RunPod pod in dollars:
    each row in its own currency, the totals side by side, one chart per currency."""
    with Ledger(tmp_path / "ledger.sqlite3") as ledger:
        ledger.observe("autodl-4090", 2 * HOUR, 1.98, NOW)
        ledger.observe("runpod-a40", 4 * HOUR, 0.69, NOW, "$")
    billing = Billing(tmp_path / "ledger.sqlite3")
    app = Host(billing, lambda: NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        rows = {line.split()[0]: line.split()[1:] for line in text_of(app, "cost-table").splitlines() if line.strip()}
        assert rows["autodl-4090"] == ["¥1.98/h", "¥3.96", "¥3.96", "¥3.96", "¥3.96"]
        assert rows["runpod-a40"] == ["$0.69/h", "$2.76", "$2.76", "$2.76", "$2.76"]
        # one total per currency, never ¥6.72
        totals = [line.split() for line in text_of(app, "cost-table").splitlines() if line.startswith("total")]
        assert totals == [["total", "in", "¥", *["¥3.96"] * 4], ["total", "in", "$", *["$2.76"] * 4]]
        chart = text_of(app, "cost-chart")
        assert "¥ per day, last 14 days" in chart and "$ per day, last 14 days" in chart
        assert chart.index("¥ per day") < chart.index("$ per day")  # settings.currency's first
    billing.close()
