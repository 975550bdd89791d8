"""The line under the fleet bar: what the fleet's GPUs sum to (busy, idle, mean utilisation,
Xids) and how the list is arranged (`o` sort, `w` show-only, `/` name filter), with how many
rows that leaves. While the list is arranged that part comes first: rows out of sight must
never go unsaid."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import Static

from gpu_tui.core.i18n import _
from gpu_tui.core.units import format_percent
from gpu_tui.ui.arrange import SHOWS, SORTS, Arrangement, GpuTotals
from gpu_tui.ui.format import text_parts

__all__ = ["FleetSummary", "summary_text"]


def summary_text(totals: GpuTotals, how: Arrangement, shown: int, rows: int, keys: dict[str, str]) -> Text:
    """`keys`: the keys of sort, show and filter as typed (`o`, `w`, `/`), for the hint."""
    t = Text()
    if not how.plain:
        t.append(_("{shown}/{rows} rows").format(shown=shown, rows=rows), style="bold")
        if how.sort != "config":
            t.append("  " + _("sorted by {how}").format(how=_(SORTS[how.sort])))
        if how.show != "all":
            t.append("  " + _("only {which}").format(which=_(SHOWS[how.show])), style="bold yellow")
        if how.text:  # typed by the user: data, never markup
            t.append("  ")
            t.append_text(Text.assemble(*text_parts(_("name has {text}"), text=(how.text, "bold"))))
        t.append("   ")
    t.append(_("GPUs {busy} busy {idle} idle").format(busy=totals.busy, idle=totals.idle))
    t.append("  " + _("mean {util}").format(util=format_percent(totals.mean_util)))
    if totals.xids:
        t.append("  " + _("Xid on {count} GPUs").format(count=totals.xids), style="bold red")
    if how.plain:
        hint = _("{sort} sort  {show} show  {find} find").format(**keys)
        t.append(f"   {hint}", style="dim")
    return t


class FleetSummary(Static):
    DEFAULT_CSS = """
    FleetSummary { height: 1; padding: 0 1; }
    """

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self._last: Text | None = None
        self.keys: dict[str, str] = {"sort": "o", "show": "w", "find": "/"}

    def show(self, totals: GpuTotals, how: Arrangement, shown: int, rows: int) -> None:
        t = summary_text(totals, how, shown, rows, self.keys)
        t.no_wrap = True
        t.overflow = "ellipsis"
        if t != self._last:  # repaint only when the text changed
            self._last = t
            self.update(t, layout=False)  # one fixed row: never a relayout
