"""The top bar: the fleet's burn rate and cost so far first (money must show at any width),
then how many instances are up, the balance note, and where the fleet comes from. Money is per
currency (`¥1.98/h + $0.69/h`): a mixed fleet's rates are never added up."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from gpu_tui.core.i18n import _
from gpu_tui.core.units import format_money_sum, format_rates_per_hour
from gpu_tui.services.fleet import Fleet

__all__ = ["FleetBar"]


class FleetBar(Static):
    DEFAULT_CSS = """
    FleetBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(self, title: str, currency: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.source_label = title
        """The source: `demo`, `local`, a config path that is not the default one, or ""."""
        self.currency = currency
        self._last: Text | None = None
        self.note: Text | None = None
        """Shown after the totals (the AutoDL balance and how long it lasts)."""

    def refresh_from(self, fleet: Fleet, now: float) -> None:
        views = list(fleet.views.values())
        billing = sum(1 for v in views if v.billing)
        t = Text()
        t.append(format_rates_per_hour(fleet.burn_by_currency(self.currency)), style="bold yellow")
        t.append("  " + _("so far") + " ")
        t.append(format_money_sum(fleet.cost_by_currency(now, self.currency)), style="bold")
        t.append("  " + _("{online}/{total} online").format(online=billing, total=len(views)))
        if self.note is not None:
            t.append("  ")
            t.append_text(self.note)
        t.append("  gpu-tui", style="bold")
        if self.source_label:
            t.append(f" {self.source_label}", style="dim")
        if t != self._last:  # repaint only when the text changed
            self._last = t
            self.update(t, layout=False)  # one fixed row: never a relayout
