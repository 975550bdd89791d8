"""The instance list: one row per instance in config order; a row is repainted only when its
text changed (ui/widgets/row_list.py), laid out here at fixed widths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.cells import cell_len
from rich.text import Text

from gpu_tui.core.i18n import N_, _
from gpu_tui.core.units import format_mib_as_gib, format_money, format_percent, format_rate_per_hour
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.format import job_mark, state_text
from gpu_tui.ui.widgets.row_list import RowList

__all__ = ["InstanceTable"]

COLUMNS = ("name", "state", "gpus", "util", "vram", "rate", "cost")
LABELS = (N_("Instance"), N_("State"), N_("GPUs"), N_("Util"), N_("VRAM GiB"), N_("Rate"), N_("So far"))
# fixed widths in cells: values grow after the first paint, and together they fit an 80-column
# terminal in every language (the state column holds the longest Chinese state word, 12 cells)
WIDTHS = (17, 13, 4, 4, 11, 8, 9)  # + 2 spaces between: 78 columns (English)
VALUE_WIDTHS = (17, 13, 2, 4, 11, 0, 9)
"""What the values need: 2 digits of GPUs, `100%`, `438.0/637.2`, `¥1,234.56`; the rate's
width is that of `¥10.00/h` as the language writes it (`¥10.00/时`: 9 cells)."""
NUMBERS = ("gpus", "util", "vram", "rate", "cost")
MIN_NAME = 10


def column_widths(labels: tuple[str, ...], rate_sample: str) -> tuple[int, ...]:
    """Each column as wide as its header and its values need, the name column giving back what
    the others took over WIDTHS: the row stays 78 cells in every language."""
    needs = list(VALUE_WIDTHS)
    needs[COLUMNS.index("rate")] = cell_len(rate_sample)
    widths = [max(need, cell_len(label)) for need, label in zip(needs, labels, strict=True)]
    widths[0] = max(MIN_NAME, widths[0] - (sum(widths) - sum(WIDTHS)))
    return tuple(widths)


def header(labels: tuple[str, ...], widths: tuple[int, ...]) -> Text:
    return _line(
        {c: Text(label, justify="right" if c in NUMBERS else "left") for c, label in zip(COLUMNS, labels, strict=True)},
        widths,
    )


def _state_with_job(v: InstanceView, now: float, idle_after: float | None = None) -> Text:
    """The state word, and the current job's mark when online: `online ▶45%`, `online ✗`;
    `online idle` once it has billed idle (GPUs under the threshold, no job) for `idle_after` s."""
    t = state_text(v, now)
    idle = v.idle_seconds(now)
    if idle_after is not None and idle is not None and idle >= idle_after and v.shown_state == "online":
        return Text(_("online idle"), style="bold yellow")
    job = v.current_job
    if job is not None and v.state == "online":
        t.append(" ")
        t.append_text(job_mark(job))
    if v.autostop is not None and v.autostop.status.armed and v.state == "online":
        t.append(" ⏻", style="bold cyan")  # autostop armed: the host panel says when
    return t


def _line(cells: dict[str, Text], widths: tuple[int, ...] = WIDTHS) -> Text:
    """The row's cells at their fixed widths (in cells, truncated by cells): text left, numbers
    right, two spaces apart."""
    line = Text()
    for i, (col, width) in enumerate(zip(COLUMNS, widths, strict=True)):
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


class InstanceTable(RowList):
    DEFAULT_CSS = """
    InstanceTable { height: auto; max-height: 40%; }
    """

    def __init__(self, currency: str, **kw: Any) -> None:
        # the language is in force before the app is built: translate the header once, here
        labels = tuple(_(label) for label in LABELS)
        widths = column_widths(labels, format_rate_per_hour(10.0, currency))
        super().__init__(header(labels, widths), **kw)
        self.widths = widths
        self.currency = currency
        self._lines: dict[str, Text] = {}
        self.idle_after: float | None = None
        """Seconds of billing idle after which a row says `online idle` (settings.idle_minutes)."""
        self.forward_count: Callable[[str], int] | None = None
        """How many ports of an instance are forwarded (the `⇄N` after its name)."""
        self.clocked: set[str] = set()
        """Rows whose text moves with the clock alone (cost so far, a reconnect countdown, an
        idle time short of `idle_after`): the dashboard's tick rebuilds these, not the rest (a
        lab's hundreds of nodes change only when their numbers do)."""
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
            "name": self._name_cell(v.name),
            "state": _state_with_job(v, now, self.idle_after),
            "gpus": Text(str(len(gpus)) if gpus else "-", justify="right"),
            "util": Text(format_percent(sum(utils) / len(utils)) if utils else "-", justify="right"),
            "vram": Text(f"{format_mib_as_gib(used)}/{format_mib_as_gib(total)}" if total else "-", justify="right"),
            "rate": Text(format_rate_per_hour(v.config.hourly_rate, v.config.bills_in(self.currency)), justify="right"),
            "cost": Text(format_money(v.cost_so_far(now), v.config.bills_in(self.currency)), justify="right"),
        }

    def _name_cell(self, name: str) -> Text:
        """The name, then `⇄N` for N live forwards, the name cut (not the mark) when narrow."""
        count = self.forward_count(name) if self.forward_count is not None else 0
        cell = Text(name, style="bold")
        if count:
            mark = f" ⇄{count}"
            cell.truncate(max(1, self.widths[0] - cell_len(mark)), overflow="ellipsis")
            cell.append(mark, style="bold green")
        return cell

    def show(self, v: InstanceView, now: float) -> None:
        line = _line(self.cells_for(v, now), self.widths)
        self.set_row(v.name, line)  # repaints that one line, and only if it changed
        self._lines[v.name] = line
        if self._moves_with_clock(v, now):
            self.clocked.add(v.name)
        else:
            self.clocked.discard(v.name)

    def _moves_with_clock(self, v: InstanceView, now: float) -> bool:
        """The row's text can change with `now` alone (what cells_for reads of the clock)."""
        if v.cost_so_far(now) is not None or (v.shown_state == "offline" and v.retry_at is not None):
            return True
        if v.release_at is not None:  # the time left before its provider may release it
            return True
        idle = v.idle_seconds(now)
        return self.idle_after is not None and idle is not None and idle < self.idle_after

    def remove_row(self, key: str) -> None:
        super().remove_row(key)
        self._lines.pop(key, None)
        self.clocked.discard(key)

    @property
    def selected_name(self) -> str | None:
        return self.key_at(self.cursor_row)
