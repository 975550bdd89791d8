"""The top bar: fleet burn rate and cost so far, ticking once a second."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from gpu_tui.core.cost import format_money
from gpu_tui.services.fleet import Fleet

__all__ = ["FleetBar"]


class FleetBar(Static):
    DEFAULT_CSS = """
    FleetBar { height: 1; background: $panel; color: $text; padding: 0 1; }
    """

    def __init__(self, title: str, currency: str, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self._title = title
        self._currency = currency
        self._last: Text | None = None
        self.note: Text | None = None
        """Shown after the totals (the AutoDL balance and how long it lasts)."""

    def refresh_from(self, fleet: Fleet, now: float) -> None:
        views = list(fleet.views.values())
        billing = [v for v in views if v.billing]
        t = Text()
        t.append("gpu-tui", style="bold")
        t.append(f" {self._title}  ")
        t.append(f"{len(billing)}/{len(views)} online  ")
        t.append("burn ")
        t.append(f"{format_money(fleet.burn_rate(), self._currency)}/h", style="bold yellow")
        t.append("  so far ")
        t.append(format_money(fleet.cost_so_far(now), self._currency), style="bold")
        if self.note is not None:
            t.append("  ")
            t.append_text(self.note)
        if t != self._last:  # repaint only when the text changed
            self._last = t
            self.update(t, layout=False)  # one fixed row: never a relayout
