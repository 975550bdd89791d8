"""The dashboard's `o` (sort), `w` (show only) and `/` (name filter) keys, and the summary line
they are reported on. The order is worked out again on each tick (1 s), and the table moves
rows only when it came out different: a sorted fleet of 500 costs one sort a second."""

from __future__ import annotations

from gpu_tui.ui.arrange import Arrangement, arrange, gpu_totals
from gpu_tui.ui.dashboard.context import DashboardContext
from gpu_tui.ui.screens.find import FindScreen
from gpu_tui.ui.widgets.fleet_summary import FleetSummary
from gpu_tui.ui.widgets.instance_table import InstanceTable

__all__ = ["ArrangeKeys"]


class ArrangeKeys:
    def __init__(self, ctx: DashboardContext, table: InstanceTable, summary: FleetSummary) -> None:
        self._ctx = ctx
        self._table = table
        self._summary = summary
        self.how = Arrangement()
        self.idle_util = 10.0
        """settings.idle_util_percent: a GPU under it is idle."""

    def sort(self) -> None:
        self._set(self.how.next_sort())

    def show(self) -> None:
        self._set(self.how.next_show())

    def find(self) -> None:
        def typed(text: str | None) -> None:
            if text is not None:
                self._set(self.how.with_text(text))

        self._ctx.push(FindScreen(self.how.text), typed)

    def _set(self, how: Arrangement) -> None:
        self.how = how
        self.apply()

    def apply(self) -> None:
        """Rows in the order and choice in force, and the summary line: on each tick and key."""
        fleet = self._ctx.fleet
        if fleet is None:
            return
        views = fleet.views.values()
        if self.how.plain:
            self._table.order_rows(None)
        else:
            self._table.order_rows(arrange(views, self.how, self.idle_util))
        totals = gpu_totals(views, self.idle_util)
        self._summary.show(totals, self.how, self._table.row_count, self._table.known_count)
