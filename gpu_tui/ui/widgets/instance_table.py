"""The instance list: one row per instance in config order; a row is repainted only when its
text changed (ui/widgets/row_list.py), laid out here at fixed widths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text

from gpu_tui.core.units import format_mib_as_gib, format_money, format_percent, format_rate_per_hour
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.format import job_mark, state_text
from gpu_tui.ui.widgets.row_list import RowList

__all__ = ["InstanceTable"]

COLUMNS = ("name", "state", "gpus", "util", "vram", "rate", "cost")
LABELS = ("Instance", "State", "GPUs", "Util", "VRAM GiB", "Rate", "So far")
# fixed widths: values grow after the first paint, and together they fit an 80-column terminal
WIDTHS = (17, 13, 4, 4, 11, 8, 9)  # + 2 spaces between: 78 columns


def _state_with_job(v: InstanceView, now: float, idle_after: float | None = None) -> Text:
    """The state word, and the current job's mark when online: `online ▶45%`, `online ✗`;
    `online idle` once it has billed idle (GPUs under the threshold, no job) for `idle_after` s."""
    t = state_text(v, now)
    idle = v.idle_seconds(now)
    if idle_after is not None and idle is not None and idle >= idle_after and v.shown_state == "online":
        return Text("online idle", style="bold yellow")
    job = v.current_job
    if job is not None and v.state == "online":
        t.append(" ")
        t.append_text(job_mark(job))
    if v.autostop is not None and v.autostop.status.armed and v.state == "online":
        t.append(" ⏻", style="bold cyan")  # autostop armed: the host panel says when
    return t


def _line(cells: dict[str, Text]) -> Text:
    """The row's cells at their fixed widths: text left, numbers right, two spaces apart."""
    line = Text()
    for i, (col, width) in enumerate(zip(COLUMNS, WIDTHS, strict=True)):
        cell = cells[col].copy()
        cell.truncate(width, overflow="ellipsis")
        pad = " " * (width - cell.cell_len)
        if i:
            line.append("  ")
        if cell.justify == "right":
            line.append(pad)
            line.append_text(cell)
        else:
            line.append_text(cell)
            line.append(pad)
    return line


HEADER = _line({c: Text(label, justify="right" if c in ("gpus", "util", "vram", "rate", "cost") else "left")
                for c, label in zip(COLUMNS, LABELS, strict=True)})


class InstanceTable(RowList):
    DEFAULT_CSS = """
    InstanceTable { height: auto; max-height: 40%; }
    """

    def __init__(self, currency: str, **kw: Any) -> None:
        super().__init__(HEADER, **kw)
        self.currency = currency
        self._lines: dict[str, Text] = {}
        self.idle_after: float | None = None
        """Seconds of billing idle after which a row says `online idle` (settings.idle_minutes)."""
        self.on_move: Callable[[], None] | None = None
        """Called as soon as the cursor moved (any key, the mouse), before the next frame: the
        Highlighted message arrives a frame or two later under load, and the panels showing
        the selection would then lag the table by that much."""

    def watch_cursor_row(self, old: int, new: int) -> None:
        super().watch_cursor_row(old, new)
        if old != new and self.on_move is not None:
            self.on_move()

    def cells_for(self, v: InstanceView, now: float) -> dict[str, Text]:
        gpus = v.frame.gpus if v.frame and v.state == "online" else ()
        utils = [g.utilization_gpu for g in gpus if g.utilization_gpu is not None]
        used = sum(g.memory_used_mib or 0 for g in gpus)
        total = sum(g.memory_total_mib or 0 for g in gpus)
        return {
            "name": Text(v.name, style="bold"),
            "state": _state_with_job(v, now, self.idle_after),
            "gpus": Text(str(len(gpus)) if gpus else "-", justify="right"),
            "util": Text(format_percent(sum(utils) / len(utils)) if utils else "-", justify="right"),
            "vram": Text(f"{format_mib_as_gib(used)}/{format_mib_as_gib(total)}" if total else "-", justify="right"),
            "rate": Text(format_rate_per_hour(v.config.hourly_rate, self.currency), justify="right"),
            "cost": Text(format_money(v.cost_so_far(now), self.currency), justify="right"),
        }

    def show(self, v: InstanceView, now: float) -> None:
        line = _line(self.cells_for(v, now))
        self.set_row(v.name, line)  # repaints that one line, and only if it changed
        self._lines[v.name] = line

    @property
    def selected_name(self) -> str | None:
        return self.key_at(self.cursor_row)
