"""`GpuTuiApp`: the dashboard. Instance list, the selected instance's GPUs and processes, fleet cost.

Monitors run as async tasks on the app's loop and report through a coalescing message per
instance; only the changed row (and the panel, for the selected instance) is repainted.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import DataTable, Footer

from gpu_tui.services.fleet import Fleet, InstanceView
from gpu_tui.ui.messages import InstanceChanged
from gpu_tui.ui.screens import DetailScreen, HelpScreen, TrustKeyScreen, WelcomeScreen
from gpu_tui.ui.source import FleetSource, Opened
from gpu_tui.ui.widgets import FleetBar, GpuPanel, HostPanel, InstanceTable

__all__ = ["GpuTuiApp"]

HOST_KEY_STATES = ("host key changed", "unknown host key")
RETRY_STATES = ("offline", "auth failed", "connecting")


class GpuTuiApp(App[str | None]):
    """Exits with None, or "demo"/"local" when the welcome screen asked for another source."""

    TITLE = "gpu-tui"
    CSS_PATH = Path(__file__).with_name("app.tcss")
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("enter", "detail", "Detail", id="detail"),
        Binding("j", "cursor(1)", "Down", show=False),
        Binding("k", "cursor(-1)", "Up", show=False),
        Binding("K", "trust_key", "Trust key", id="trust_key"),
        Binding("R", "reconnect", "Reconnect", id="reconnect"),
    ]

    def __init__(
        self,
        source: FleetSource,
        *,
        keys: dict[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.source = source
        self.clock = clock
        self.fleet: Fleet | None = None
        self.opened: Opened | None = None
        self._keys = keys or {}
        if self._keys:
            self.set_keymap(self._keys)

    # ----- layout
    def compose(self) -> ComposeResult:
        yield FleetBar(self.source.title, "¥", id="fleet-bar")
        yield InstanceTable("¥", id="instances")
        panel = GpuPanel(id="gpus")
        panel.show_address = self.source.show_address
        yield panel
        yield HostPanel(id="host")
        yield Footer()

    async def on_mount(self) -> None:
        if self.source.empty:
            self.push_screen(WelcomeScreen(self.source.config_path), self._welcome_done)
            return
        self.opened = await self.source.open()
        settings = self.opened.settings
        currency = settings.settings.currency
        self.query_one(FleetBar)._currency = currency
        self.query_one(InstanceTable)._currency = currency
        self.fleet = Fleet(
            self.opened.hosts,
            refresh_seconds=settings.settings.refresh_seconds,
            on_change=lambda name, _event: self.post_message(InstanceChanged(name)),
            clock=self.clock,
        )
        table = self.query_one(InstanceTable)
        now = self.clock()
        for view in self.fleet.views.values():
            table.show(view, now)
        table.focus()
        self.refresh_panels()
        self.run_worker(self.fleet.run(), name="fleet", exit_on_error=False)
        self.set_interval(1.0, self._tick)

    def _welcome_done(self, choice: str | None) -> None:
        self.exit(None if choice in (None, "quit") else choice)

    async def on_unmount(self) -> None:
        self.workers.cancel_all()
        if self.opened is not None and self.opened.close is not None:
            await self.opened.close()

    # ----- updates
    def selected(self) -> InstanceView | None:
        if self.fleet is None:
            return None
        name = self.query_one(InstanceTable).selected_name
        return self.fleet.views.get(name) if name else None

    def refresh_panels(self) -> None:
        view, now = self.selected(), self.clock()
        with self.batch_update():
            self.query_one(GpuPanel).show(view, now)
            self.query_one(HostPanel).show(view)
        self.refresh_bindings()

    def on_instance_changed(self, message: InstanceChanged) -> None:
        if self.fleet is None:
            return
        view = self.fleet.views[message.name]
        self.query_one(InstanceTable).show(view, self.clock())
        if self.selected() is view:
            self.refresh_panels()

    def _tick(self) -> None:
        if self.fleet is None:
            return
        now = self.clock()
        table = self.query_one(InstanceTable)
        with self.batch_update():
            for view in self.fleet.views.values():
                table.show(view, now)  # cost and countdown cells; unchanged cells are skipped
            self.query_one(FleetBar).refresh_from(self.fleet, now)

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self.refresh_panels()

    def on_data_table_row_selected(self, _event: DataTable.RowSelected) -> None:
        self.action_detail()

    # ----- actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        view = self.selected()
        if action == "trust_key":
            return True if view and view.shown_state in HOST_KEY_STATES and view.key_line else None
        if action == "reconnect":
            return True if view and view.shown_state in RETRY_STATES else None
        if action == "detail":
            return True if view is not None else None
        return True

    def action_cursor(self, step: int) -> None:
        table = self.query_one(InstanceTable)
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + step)))

    def action_detail(self) -> None:
        view = self.selected()
        if view is not None:
            self.push_screen(DetailScreen(view))

    def action_help(self) -> None:
        rows: list[tuple[str, str, str]] = [("up/down j/k", "", "select instance")]
        for binding in self.BINDINGS:
            b = binding if isinstance(binding, Binding) else Binding(*binding)
            if b.id is None:
                continue
            key = self._keys.get(b.id, b.key)
            rows.append((key, b.id, b.description))
        self.push_screen(HelpScreen(rows))

    def action_reconnect(self) -> None:
        view = self.selected()
        if self.fleet and view:
            self.fleet.retry(view.name)
            self.notify(f"reconnecting {view.name}…")

    def action_trust_key(self) -> None:
        view = self.selected()
        if view is None or view.key_line is None or view.fingerprint is None or self.opened is None:
            return
        changed = view.shown_state == "host key changed"
        address = f"{view.config.host}:{view.config.port}"
        key_line, name = view.key_line, view.name

        def done(trusted: bool | None) -> None:
            if trusted and self.opened is not None and self.fleet is not None:
                self.opened.trust(name, key_line)
                self.fleet.retry(name)
                self.notify(f"trusted the key of {name}; connecting")

        self.push_screen(TrustKeyScreen(name, address, view.fingerprint, changed), done)
