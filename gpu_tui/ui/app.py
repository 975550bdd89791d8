"""`GpuTuiApp`: the dashboard. Instance list, the selected instance's GPUs and processes, fleet cost.

Monitors run as async tasks on the app's loop and report through a coalescing message per
instance; only the changed row (and the panel, for the selected instance) is repainted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from pydantic import SecretStr
from rich.text import Text
from textual import work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import DataTable, Footer
from textual.worker import Worker, WorkerCancelled, WorkerState

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.cost import format_money
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.services.autodl_api import hours_left
from gpu_tui.services.events import GpuFrameReceived, HostStatsReceived, StateChanged
from gpu_tui.services.fleet import Fleet, FleetEvent, InstanceView
from gpu_tui.services.jobwatch import JobFinished
from gpu_tui.ui.job_actions import JobActions
from gpu_tui.ui.messages import JobEnded
from gpu_tui.ui.power_actions import PowerActions
from gpu_tui.ui.screens import (
    DetailScreen,
    HelpScreen,
    PasswordAnswer,
    PasswordScreen,
    TrustKeyScreen,
    WelcomeScreen,
)
from gpu_tui.ui.screens.add import Added, AddInstanceScreen
from gpu_tui.ui.screens.conda import CondaScreen
from gpu_tui.ui.screens.cost import CostScreen
from gpu_tui.ui.screens.edit import EditInstanceScreen
from gpu_tui.ui.screens.env_check import EnvCheckScreen
from gpu_tui.ui.screens.job_log import JobLogScreen
from gpu_tui.ui.screens.sync import SyncScreen
from gpu_tui.ui.shell import open_shell, shell_possible
from gpu_tui.ui.source import FleetSource, Opened
from gpu_tui.ui.widgets import FleetBar, GpuPanel, HostPanel, InstanceTable

__all__ = ["GpuTuiApp"]

DASHBOARD_ACTIONS = frozenset({
    "quit", "help", "detail", "run_job", "logs", "stop_job", "check", "conda", "add", "cost",
    "shutdown", "shutdown_all", "cursor", "trust_key", "reconnect", "sync", "shell", "edit",
})
"""The dashboard's own actions: off while another screen is on top (`e` on the conda screen
must not open a second one); Textual's own (`app.pop_screen`...) stay on."""

log = logging.getLogger(__name__)

PAINT_SECONDS = 0.5
"""How often changed rows are repainted: a fleet streaming at 1 Hz then costs about two table
renders a second instead of one per instance per second."""
KEY_NAMES = {"question_mark": "?", "dollar_sign": "$"}
"""How the help screen writes keys Textual names in words."""
BALANCE_SECONDS = 300
"""How often the AutoDL balance is asked for (it changes by cents a minute)."""
BUDGET_CHECK_SECONDS = 30
"""How often today's cost is compared with settings.budget_daily."""
HOST_KEY_STATES = ("host key changed", "unknown host key")
RETRY_STATES = ("offline", "auth failed", "connecting", "stopped")


class GpuTuiApp(JobActions, PowerActions, App[str | None]):
    """Exits with None, or "demo"/"local" when the welcome screen asked for another source."""

    TITLE = "gpu-tui"
    CSS_PATH = Path(__file__).with_name("app.tcss")
    BINDINGS = [
        Binding("q", "quit", "Quit", id="quit"),
        Binding("question_mark", "help", "Help", id="help"),
        Binding("enter", "detail", "Detail", id="detail"),
        Binding("r", "run_job", "Run", id="run_job"),
        Binding("l", "logs", "Logs", id="logs"),
        Binding("x", "stop_job", "Stop job", id="stop_job"),
        Binding("c", "check", "Check", id="check"),
        Binding("e", "conda", "Conda", id="conda"),
        Binding("y", "sync", "Sync", id="sync"),
        Binding("t", "shell", "Shell", id="shell"),
        Binding("a", "add", "Add", id="add"),
        Binding("i", "edit", "Edit", id="edit"),
        Binding("dollar_sign", "cost", "Cost", id="cost"),
        Binding("S", "shutdown", "Shut down", id="shutdown"),
        Binding("Q", "shutdown_all", "Shut all+quit", id="shutdown_all"),
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
        self._ticker: Timer | None = None
        self._painter: Timer | None = None
        self._dirty: set[str] = set()
        self._seen_frame: set[str] = set()
        self._paint_soon = False
        self._enabled: tuple[bool | None, ...] = ()
        self._id_bindings = [b for b in self.BINDINGS if isinstance(b, Binding) and b.id]
        self._closing = False
        self._fleet_worker: Worker[None] | None = None
        self._shutting: set[str] = set()
        self._idle_warned: set[str] = set()
        self._budget_warned: str | None = None
        self._budget_checked = 0.0
        self._balance_timer: Timer | None = None
        if self._keys:
            self.set_keymap(self._keys)

    # ----- layout
    def compose(self) -> ComposeResult:
        # Held, not queried: App.query_one searches the screen on top, which may be a modal.
        self.fleet_bar = FleetBar(self.source.title, "¥", id="fleet-bar")
        self.table = InstanceTable("¥", id="instances")
        self.table.on_move = self.refresh_panels  # same frame as the table's own repaint
        self.gpu_panel = GpuPanel(id="gpus")
        self.gpu_panel.show_address = self.source.show_address
        self.gpu_panel.keys.update({k: v for k, v in self._keys.items() if k in self.gpu_panel.keys})
        self.host_panel = HostPanel(id="host")
        yield self.fleet_bar
        yield self.table
        yield self.gpu_panel
        yield self.host_panel
        yield Footer()

    async def on_mount(self) -> None:
        if self.source.empty:
            self.push_screen(WelcomeScreen(self.source.config_path), self._welcome_done)
            return
        self.opened = await self.source.open()
        settings = self.opened.settings
        self.gpu_panel.asks_password = self.opened.use_password is not None
        currency = settings.settings.currency
        self.fleet_bar._currency = currency
        self.table._currency = currency
        self.fleet = Fleet(
            self.opened.hosts,
            refresh_seconds=settings.settings.refresh_seconds,
            on_change=self._fleet_event,
            clock=self.clock,
            idle_util_percent=settings.settings.idle_util_percent,
        )
        idle_after = settings.settings.idle_minutes * 60.0
        self.table.idle_after = self.host_panel.idle_after = idle_after
        self.host_panel.currency = currency
        table = self.table
        now = self.clock()
        for view in self.fleet.views.values():
            table.show(view, now)
        table.focus()
        self.refresh_panels()
        self._fleet_worker = self.run_worker(self.fleet.run(), name="fleet", exit_on_error=False)
        if self.opened.balance is not None:
            self._refresh_balance()
            self._balance_timer = self.set_interval(BALANCE_SECONDS, self._refresh_balance)
        self._ticker = self.set_interval(1.0, self._tick)
        self._painter = self.set_interval(PAINT_SECONDS, self._paint)

    def _fleet_event(self, name: str, event: FleetEvent) -> None:
        # Monitors report dozens of changes a second across a fleet; rows are repainted in one
        # batch per PAINT_SECONDS (see _paint), not once per event.
        self._dirty.add(name)
        first_frame = isinstance(event, GpuFrameReceived) and name not in self._seen_frame
        if first_frame:
            self._seen_frame.add(name)
        if isinstance(event, StateChanged) or first_frame:
            # news a user waits for (connected, dropped, the first numbers): paint now
            if not self._paint_soon:
                self._paint_soon = True
                self.call_later(self._paint_now)
        if isinstance(event, JobFinished):
            self.post_message(JobEnded(name, event.job))
        elif isinstance(event, HostStatsReceived) and event.stats.uptime_seconds is not None:
            # every sighting of an instance up is billing time, whatever its GPUs say
            ledger = self.opened.ledger if self.opened else None
            if ledger is not None and self.fleet is not None:
                ledger.observe(name, event.stats.uptime_seconds, self.fleet.views[name].config.hourly_rate, event.stats.taken_at)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # workers run with exit_on_error=False so one failed action cannot close the dashboard;
        # what failed still reaches the log and the screen
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            err = event.worker.error
            log.error("worker %s failed", event.worker.name, exc_info=err)
            self.notify(f"{event.worker.name}: {type(err).__name__}: {err}", title="internal error", severity="error")

    def on_job_ended(self, message: JobEnded) -> None:
        if not self._closing:
            self.alert_job_ended(message.name, message.job)

    def _welcome_done(self, choice: str | None) -> None:
        if choice == "add":
            self._add_first()
            return
        self.exit(None if choice in (None, "quit") else choice)

    @work(exit_on_error=False)
    async def _add_first(self) -> None:
        """The welcome screen's add: once the config has an instance, the CLI reopens it."""
        opened = await self.source.open()
        if opened.onboarder is None:
            return
        added = await self.push_screen_wait(AddInstanceScreen(opened.onboarder))
        if added is None:
            self.push_screen(WelcomeScreen(self.source.config_path), self._welcome_done)
        else:
            self.exit("config")

    async def on_unmount(self) -> None:
        # The tick must stop before the widgets it paints go away, and the monitors must finish
        # their clean-up (killing local subprocesses, closing channels) while the loop still runs.
        for timer in (self._ticker, self._painter, self._balance_timer):
            if timer is not None:
                timer.stop()
        self._closing = True
        self.workers.cancel_all()
        if self._fleet_worker is not None:
            with contextlib.suppress(asyncio.TimeoutError, TimeoutError, WorkerCancelled):
                await asyncio.wait_for(self.workers.wait_for_complete([self._fleet_worker]), 5.0)
        if self.opened is not None and self.opened.ledger is not None:
            self.opened.ledger.close_db()  # writes what the throttle held back
        if self.opened is not None and self.opened.close is not None:
            await self.opened.close()

    # ----- updates
    def selected(self) -> InstanceView | None:
        if self.fleet is None:
            return None
        name = self.table.selected_name
        return self.fleet.views.get(name) if name else None

    def refresh_panels(self) -> None:
        view, now = self.selected(), self.clock()
        with self.batch_update():
            self.gpu_panel.show(view, now)
            self.host_panel.show(view, now)
        # the footer rebuilds all its keys on refresh_bindings(): only when one changed state
        enabled = tuple(self.check_action(b.action, ()) for b in self._id_bindings)
        if enabled != self._enabled:
            self._enabled = enabled
            self.refresh_bindings()

    def _paint_now(self) -> None:
        self._paint_soon = False
        self._paint()

    def _paint(self) -> None:
        """Repaint the rows (and the panel) of the instances that changed since the last paint."""
        if self.fleet is None or self._closing or not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        now = self.clock()
        selected = self.table.selected_name
        with self.batch_update():
            for name in dirty:
                self.table.show(self.fleet.views[name], now)
            if selected in dirty:
                self.refresh_panels()

    def _tick(self) -> None:
        if self.fleet is None or self._closing:
            return
        now = self.clock()
        table = self.table
        with self.batch_update():
            for view in self.fleet.views.values():
                table.show(view, now)  # cost and countdown cells; unchanged cells are skipped
            self.fleet_bar.refresh_from(self.fleet, now)
        self._warn_idle(now)
        if now - self._budget_checked >= BUDGET_CHECK_SECONDS:
            self._budget_checked = now
            self._warn_budget(now)

    @work(group="balance", exclusive=True, exit_on_error=False)
    async def _refresh_balance(self) -> None:
        assert self.opened is not None and self.opened.balance is not None
        currency = self.opened.settings.settings.currency
        try:
            balance = await self.opened.balance()
        except GpuTuiError as exc:
            self.fleet_bar.note = Text(f"AutoDL balance: {exc.title}", style="dim")
            log.warning("autodl balance: %s", exc)
            return
        burn = sum(v.config.hourly_rate for v in self.fleet.views.values() if v.billing and v.config.provider == "autodl") if self.fleet else 0.0
        left = hours_left(balance, burn)
        note = Text(f"AutoDL {format_money(balance.usable, currency)}")
        if left is not None:
            note.append(f" ~{left:.0f}h left" if left >= 1 else f" ~{left * 60:.0f}min left",
                        style="bold red" if left < 24 else "")
        self.fleet_bar.note = note

    def _warn_budget(self, now: float) -> None:
        """Once a day, when today's cost in the ledger passes settings.budget_daily."""
        assert self.opened is not None
        s, ledger = self.opened.settings.settings, self.opened.ledger
        if ledger is None or s.budget_daily <= 0:
            return
        ledger.flush()
        try:
            today = sum(row.today for row in ledger.per_period(now))
        except GpuTuiError as exc:
            log.warning("budget check: %s", exc)
            return
        day = time.strftime("%Y-%m-%d", time.localtime(now))
        if today > s.budget_daily and self._budget_warned != day:
            self._budget_warned = day
            self.notify(f"today's cost {s.currency}{today:.2f} has passed your daily budget of "
                        f"{s.currency}{s.budget_daily:g} (burning {s.currency}{self.fleet.burn_rate() if self.fleet else 0:g}/h)",
                        title="budget", severity="error", timeout=60)

    def _warn_idle(self, now: float) -> None:
        """One warning per idle stretch, when it passes idle_minutes."""
        assert self.fleet is not None and self.opened is not None
        s = self.opened.settings.settings
        for view in self.fleet.views.values():
            idle = view.idle_seconds(now)
            if idle is None:
                self._idle_warned.discard(view.name)
            elif idle >= s.idle_minutes * 60 and view.name not in self._idle_warned:
                self._idle_warned.add(view.name)
                self.notify(
                    f"{view.name} has been idle {idle / 60:.0f} min (every GPU under {s.idle_util_percent}%, "
                    f"no job running) and still bills {s.currency}{view.config.hourly_rate:g}/h. S shuts it down.",
                    title="idle", severity="warning", timeout=30,
                )

    def on_data_table_row_highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self.refresh_panels()

    def on_data_table_row_selected(self, _event: DataTable.RowSelected) -> None:
        self.action_detail()

    # ----- actions
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p): Textual's own commands, then every dashboard action
        possible right now, with the key that runs it."""
        yield from super().get_system_commands(screen)
        for binding in self.BINDINGS:
            b = binding if isinstance(binding, Binding) else Binding(*binding)
            if b.id is None or b.id == "quit" or screen is not self.screen_stack[0]:
                continue
            if self._dashboard_check(b.action) is not True:
                continue
            key = self._keys.get(b.id, b.key)
            # after the palette has closed: the dashboard's actions are off while it is on top
            yield SystemCommand(b.description, f"key {key} · action {b.id}", partial(self.call_after_refresh, self.run_action, b.action))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if len(self.screen_stack) > 1 and action in DASHBOARD_ACTIONS and not (
            action == "stop_job" and isinstance(self.screen, JobLogScreen)
        ):
            # the dashboard's keys belong to the dashboard: `e` on the conda screen must not
            # open a second one (the log screen keeps `x` for its job)
            return False
        return self._dashboard_check(action)

    def _dashboard_check(self, action: str) -> bool | None:
        if action in ("trust_key", "reconnect") and not self.source.remote:
            return False
        view = self.selected()
        if action == "trust_key":
            return True if view and view.shown_state in HOST_KEY_STATES and view.key_line else None
        if action == "reconnect":
            return True if view and view.shown_state in RETRY_STATES else None
        if action == "detail":
            return True if view is not None else None
        if action in ("run_job", "logs", "stop_job"):
            return self._job_check(action, view)
        if action in ("shutdown", "shutdown_all"):
            return self._power_check(action, view)
        if action == "shell":
            return shell_possible(self, view)
        if action == "sync":
            # the configured instances only: rsync's transport reads the config file
            if not (self.source.remote and self.opened is not None and self.opened.onboarder is not None):
                return False
            return True if view is not None and view.state == "online" else None
        if action == "cost":
            return self.opened is not None and self.opened.ledger is not None
        if action == "add":
            return self.opened is not None and self.opened.onboarder is not None
        if action == "edit":
            if self.opened is None or self.opened.onboarder is None:
                return False
            return True if view is not None else None
        if action in ("check", "conda"):
            return True if view is not None and view.state == "online" else None
        return True

    def action_cursor(self, step: int) -> None:
        table = self.table
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + step)))

    def action_detail(self) -> None:
        view = self.selected()
        if view is not None:
            self.push_screen(DetailScreen(view))

    def action_check(self) -> None:
        view = self.selected()
        if view is not None and self.fleet is not None:
            self.push_screen(EnvCheckScreen(view.config, self.fleet.hosts[view.name]))

    def action_shell(self) -> None:
        view = self.selected()
        if view is not None:
            open_shell(self, view)

    def action_sync(self) -> None:
        view = self.selected()
        if view is None or self.fleet is None or self.opened is None:
            return
        self.push_screen(SyncScreen(view.config, self.fleet.hosts[view.name], config_path=self.source.config_path or None,
                                    password=self.opened.typed_password(view.name)))

    def action_cost(self) -> None:
        if self.opened is not None and self.opened.ledger is not None:
            self.push_screen(CostScreen(self.opened.ledger, self.opened.settings.settings.currency, self.clock))

    def action_edit(self) -> None:
        view = self.selected()
        if view is None or self.opened is None or self.opened.onboarder is None:
            return
        self.push_screen(EditInstanceScreen(view.config, self.opened.onboarder.update), self._edited)

    @work(group="edit", exit_on_error=False)
    async def _edited(self, inst: InstanceConfig | None) -> None:
        if inst is None or self.fleet is None or self.opened is None or self.opened.make_host is None:
            return
        # a new host (the key file may have changed), built off the loop: it may ask the keyring
        host = await asyncio.to_thread(self.opened.make_host, inst)
        self.fleet.add(inst, host)
        self.table.show(self.fleet.views[inst.name], self.clock())
        self.refresh_panels()
        self.notify(f"saved {inst.name} in {self.source.config_path}")

    def action_add(self) -> None:
        if self.opened is None or self.opened.onboarder is None:
            return
        self.push_screen(AddInstanceScreen(self.opened.onboarder), self._added)

    def _added(self, added: Added | None) -> None:
        if added is None or self.fleet is None:
            return
        self.fleet.add(added.config, added.host)
        self.table.show(self.fleet.views[added.config.name], self.clock())
        self.notify(f"{added.how} {added.config.name} in {self.source.config_path}")
        if added.warning:
            self.notify(added.warning, title="keyring", severity="warning", timeout=10)

    def action_conda(self) -> None:
        view = self.selected()
        if view is not None and self.fleet is not None:
            self.push_screen(CondaScreen(view.config, self.fleet.hosts[view.name]))

    def action_help(self) -> None:
        rows: list[tuple[str, str, str]] = [("up/down j/k", "", "select instance")]
        for binding in self.BINDINGS:
            b = binding if isinstance(binding, Binding) else Binding(*binding)
            if b.id is None:
                continue
            key = KEY_NAMES.get(self._keys.get(b.id, b.key), self._keys.get(b.id, b.key))
            here = self._dashboard_check(b.action) is not False
            rows.append((key, b.id, b.description if here else f"{b.description} (not here)"))
        rows.append(("ctrl+p", "", "command palette: every action by name"))
        self.push_screen(HelpScreen(rows))

    def action_reconnect(self) -> None:
        view = self.selected()
        if self.fleet is None or view is None:
            return
        if view.shown_state == "auth failed" and self.opened and self.opened.use_password:
            self._ask_password(view)
            return
        if view.shown_state == "stopped":
            self.fleet.watch_again(view.name)
        else:
            self.fleet.retry(view.name)
        self.notify(f"reconnecting {view.name}…")

    def _ask_password(self, view: InstanceView) -> None:
        name = view.name
        login = f"{view.config.user}@{view.config.host}:{view.config.port}"
        opened = self.opened
        assert opened is not None and opened.use_password is not None
        use, save = opened.use_password, opened.save_password

        def done(answer: PasswordAnswer | None) -> None:
            if answer is None or self.fleet is None:
                return
            use(name, answer.password)
            self.fleet.retry(name)
            self.notify(f"connecting to {name} with the password you typed")
            if answer.save and save is not None:
                self.run_worker(lambda: self._save_password(save, name, answer.password), thread=True)

        self.push_screen(PasswordScreen(name, login, view.message, can_save=save is not None), done)

    def _save_password(self, save: Callable[[str, SecretStr], None], name: str, password: SecretStr) -> None:
        """Thread worker: the keyring may block for seconds; only messages go back to the UI."""
        try:
            save(name, password)
        except GpuTuiError as exc:
            self.call_from_thread(self.notify, f"{exc} (kept in memory for this session)",
                                  title=exc.title, severity="warning", timeout=10)
        else:
            self.call_from_thread(self.notify, f"password for {name} saved in the keyring")

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
