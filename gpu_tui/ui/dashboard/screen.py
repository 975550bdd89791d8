"""`DashboardScreen`: the instance list, the selected instance's GPUs and host, the fleet's cost.

It owns the dashboard's keys (bound from the one action table in core/actions.py), so they
are live only while it is on top. Monitors report through `fleet_event`; rows are repainted in
one batch per PAINT_SECONDS, and only the rows that changed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, cast

from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.timer import Timer

from gpu_tui.core.actions import ACTIONS, action, key_label
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.metrics.dcgm_range import NodeHistory
from gpu_tui.services.events import ConnState, GpuFrameReceived, HostStatsReceived, StateChanged
from gpu_tui.services.fleet import Fleet, FleetEvent, HostReplaced, InstanceView, ViewRemoved
from gpu_tui.services.forwards import ForwardEvent, Forwards
from gpu_tui.services.jobs.watch import JobFinished
from gpu_tui.ui.bindings import translate_bindings
from gpu_tui.ui.dashboard import instance_keys, job_keys, process_keys
from gpu_tui.ui.dashboard.alerts import LaptopAlerts
from gpu_tui.ui.dashboard.arrange_keys import ArrangeKeys
from gpu_tui.ui.dashboard.available import AVAILABLE, FOR_LAB_NODES, configured
from gpu_tui.ui.dashboard.context import Kept
from gpu_tui.ui.dashboard.money_warnings import MoneyWarnings
from gpu_tui.ui.dashboard.outbox import OutboxWatch
from gpu_tui.ui.dashboard.power_keys import PowerKeys
from gpu_tui.ui.dashboard.shell import open_shell
from gpu_tui.ui.dashboard.start_keys import StartKeys
from gpu_tui.ui.kept import KeptScreen
from gpu_tui.ui.messages import JobEnded
from gpu_tui.ui.screens import DetailScreen, HelpScreen
from gpu_tui.ui.screens.conda import CondaScreen
from gpu_tui.ui.screens.cost import CostScreen
from gpu_tui.ui.screens.env_check import EnvCheckScreen
from gpu_tui.ui.screens.fit import FitScreen, fleet_cards
from gpu_tui.ui.screens.forward import ForwardScreen
from gpu_tui.ui.screens.sync import SyncScreen
from gpu_tui.ui.source import FleetSource, Opened
from gpu_tui.ui.widgets import FleetBar, FleetSummary, GpuPanel, HostPanel, InstanceTable
from gpu_tui.ui.widgets.stable_footer import StableFooter

__all__ = ["AVAILABLE", "DashboardScreen"]

log = logging.getLogger(__name__)

PAINT_SECONDS = 0.5
"""How often changed rows are repainted: a fleet streaming at 1 Hz then costs about two table
renders a second instead of one per instance per second."""
TICK_SECONDS = 1.0
"""How often the clock's cells (cost so far, countdowns, idle) and the fleet bar are brought up to date."""
BALANCE_SECONDS = 300
"""How often the AutoDL balance is asked for (it changes by cents a minute)."""
BUDGET_CHECK_SECONDS = 30
"""How often today's cost is compared with settings.budget_daily."""


class DashboardScreen(Screen[None]):
    power: PowerKeys
    starter: StartKeys
    warnings: MoneyWarnings
    alerts: LaptopAlerts
    CSS_PATH = Path(__file__).with_name("dashboard.tcss")
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(a.key, a.id, a.label, id=a.id, show=a.show) for a in ACTIONS),
        Binding("j", "cursor(1)", N_("Down"), show=False),
        Binding("k", "cursor(-1)", N_("Up"), show=False),
    ]
    """In English, marked; each dashboard holds them translated (translate_bindings)."""

    def __init__(self, source: FleetSource, *, clock: Callable[[], float], keys: dict[str, str]) -> None:
        super().__init__()
        translate_bindings(self)  # the footer's labels, in the language in force
        self.source = source
        self.clock = clock
        self._keys = keys
        self._fleet: Fleet | None = None
        self._opened: Opened | None = None
        self.power = PowerKeys(self)
        self.starter = StartKeys(self)
        self.warnings = MoneyWarnings(self)
        self.alerts = LaptopAlerts(self)
        self.outbox = OutboxWatch(self)
        self._dash_timers: list[Timer] = []
        self._dirty: set[str] = set()
        self._seen_frame: set[str] = set()
        self._painted_at: dict[str, float] = {}
        """When each row was last rebuilt by `_paint`: the tick skips rows rebuilt within a tick."""
        self._paint_soon = False
        self._enabled: tuple[bool | None, ...] = ()
        self._closing = False
        self._mounted = False
        self._budget_checked = 0.0
        self._kept: dict[str, KeptScreen] = {}
        """Screens opened often (detail, a job's log), composed once and kept installed."""
        # Held, not queried: a query from a timer could find a modal's widgets instead.
        self.fleet_bar = FleetBar(source.title, "¥", id="fleet-bar")
        self.table = InstanceTable("¥", id="instances")
        self.table.on_move = self.refresh_panels  # same frame as the table's own repaint
        self.gpu_panel = GpuPanel(id="gpus")
        self.gpu_panel.show_address = source.show_address
        self.gpu_panel.keys.update({k: v for k, v in keys.items() if k in self.gpu_panel.keys})
        self.host_panel = HostPanel(id="host")
        self.host_panel.shutdown_key = key_label(self.key_for("shutdown"))
        self.host_panel.logs_key = key_label(self.key_for("logs"))
        self.host_panel.processes_key = key_label(self.key_for("gpu_processes"))
        self.forwards = Forwards(on_change=self._forward_changed)
        """Forwarded ports (`f`): they ride on the fleet's connections and live as long as the app."""
        self.table.forward_count = self.forwards.count
        self.summary = FleetSummary(id="summary")
        self.summary.keys = {
            k: key_label(self.key_for(a)) for k, a in (("sort", "sort"), ("show", "show_only"), ("find", "find"))
        }
        self.arranger = ArrangeKeys(self, self.table, self.summary)

    # ----- the context the key handlers see (ui/dashboard/context.py)
    @property
    def fleet(self) -> Fleet | None:
        return self._fleet

    @property
    def opened(self) -> Opened | None:
        return self._opened

    @property
    def currency(self) -> str:
        return self._opened.settings.settings.currency if self._opened is not None else "¥"

    def push(self, screen: Screen[Any], callback: Callable[[Any], None] | None = None) -> None:
        self.app.push_screen(screen, callback)

    def kept(self, name: str, make: Callable[[], Kept]) -> Kept:
        screen = self._kept.get(name)
        if screen is None:
            screen = self._kept[name] = make()
            self.app.install_screen(screen, name=f"kept-{name}")
        return cast(Kept, screen)

    def start(self, work: Coroutine[Any, Any, object], *, group: str) -> None:
        # exit_on_error=False: one failed action must not close the dashboard (the app reports it)
        self.run_worker(work, group=group, exit_on_error=False)

    def repaint(self, name: str) -> None:
        if self._fleet is not None and name in self._fleet.views:
            self.table.show(self._fleet.views[name], self.clock())
            self.refresh_panels()

    def selected(self) -> InstanceView | None:
        if self._fleet is None:
            return None
        name = self.table.selected_name
        return self._fleet.views.get(name) if name else None

    # ----- layout and life
    def compose(self) -> ComposeResult:
        yield self.fleet_bar
        yield self.summary
        yield self.table
        yield self.gpu_panel
        yield self.host_panel
        yield StableFooter()

    def attach(self, opened: Opened, fleet: Fleet) -> None:
        """Show `fleet` (opened from `opened`) and paint it, once the table is there to take it."""
        self._opened, self._fleet = opened, fleet
        if self._mounted:
            self._begin(opened, fleet)

    def on_mount(self) -> None:
        self._mounted = True
        if self._opened is not None and self._fleet is not None:
            self._begin(self._opened, self._fleet)

    def _begin(self, opened: Opened, fleet: Fleet) -> None:
        s = opened.settings.settings
        self.gpu_panel.asks_password = opened.use_password is not None
        self.fleet_bar.currency = self.table.currency = self.host_panel.currency = s.currency
        self.table.idle_after = self.host_panel.idle_after = s.idle_minutes * 60.0
        self.host_panel.idle_util = self.arranger.idle_util = s.idle_util_percent
        self.alerts.begin()
        now = self.clock()
        for view in fleet.views.values():
            self.table.show(view, now)
        self.arranger.apply()
        self.table.focus()
        self.refresh_panels()
        if opened.balance is not None or opened.balances:
            self._refresh_balance()
            self._dash_timers.append(self.set_interval(BALANCE_SECONDS, self._refresh_balance))
        self._dash_timers.append(self.set_interval(TICK_SECONDS, self._tick))
        self._dash_timers.append(self.set_interval(PAINT_SECONDS, self._paint))

    def stop(self) -> None:
        """Before the app closes: no tick may paint widgets that are going away."""
        self._closing = True
        for timer in self._dash_timers:
            timer.stop()
        self.forwards.close_all()

    def _forward_changed(self, event: ForwardEvent) -> None:
        self._dirty.add(event.name)  # the row's ⇄ mark
        if event.kind == "failed" and event.message and not self._closing:
            self.notify(
                event.message, title=_("port {port}").format(port=event.remote), severity="warning", markup=False
            )

    def fleet_event(self, name: str, event: FleetEvent) -> None:
        # Monitors report dozens of changes a second across a fleet; rows are repainted in one
        # batch per PAINT_SECONDS (see _paint), not once per event.
        if isinstance(event, ViewRemoved):
            self._dirty.discard(name)
            self.table.remove_row(name)
            return
        self._dirty.add(name)
        first_frame = isinstance(event, GpuFrameReceived) and name not in self._seen_frame
        if first_frame:
            self._seen_frame.add(name)
        if (isinstance(event, StateChanged) or first_frame) and not self._paint_soon:
            # news a user waits for (connected, dropped, the first numbers): paint now
            self._paint_soon = True
            self.call_later(self._paint_now)
        if isinstance(event, JobFinished):
            self.post_message(JobEnded(name, event.job))
        elif isinstance(event, StateChanged) and event.state is ConnState.ONLINE:
            self.outbox.connected(name)
        elif isinstance(event, HostReplaced):
            self.forwards.rehost(name, event.host)
        elif isinstance(event, HostStatsReceived) and event.stats.uptime_seconds is not None:
            # every sighting of an instance up is billing time, whatever its GPUs say; billing
            # decides what of it is written
            billing = self._opened.billing if self._opened else None
            if billing is not None and self._fleet is not None and self._fleet.views[name].ours:
                billing.queue(self._fleet.views[name].config, event.stats.uptime_seconds, event.stats.taken_at)

    def on_job_ended(self, message: JobEnded) -> None:
        if not self._closing:
            job_keys.alert_job_ended(self, message.name, message.job)

    # ----- painting
    def refresh_panels(self) -> None:
        view, now = self.selected(), self.clock()
        with self.app.batch_update():
            self.gpu_panel.show(view, now)
            self.host_panel.show(view, now)
        # the footer rebuilds all its keys on refresh_bindings(): only when one changed state
        enabled = tuple(self.check_action(a.id, ()) for a in ACTIONS)
        if enabled != self._enabled:
            self._enabled = enabled
            self.refresh_bindings()

    def _paint_now(self) -> None:
        self._paint_soon = False
        self._paint()

    def _paint(self) -> None:
        """Repaint the rows (and the panel) of the instances that changed since the last paint."""
        if self._fleet is None or self._closing or not self._dirty:
            return
        dirty, self._dirty = self._dirty, set()
        now = self.clock()
        selected = self.table.selected_name
        views = self._fleet.views
        names: Iterable[str] = dirty
        if any(not self.table.has_row(name) for name in dirty):  # new rows (a lab's nodes) in the fleet's order
            order = {name: i for i, name in enumerate(views)}
            names = sorted(dirty, key=lambda n: order.get(n, -1))
        with self.app.batch_update():
            for name in names:
                view = views.get(name)
                if view is not None:
                    self.table.show(view, now)
                    self._painted_at[name] = now
            if selected in dirty:
                self.refresh_panels()

    def _tick(self) -> None:
        if self._fleet is None or self._closing:
            return
        now = self.clock()
        painted = self._painted_at
        views = self._fleet.views
        with self.app.batch_update():
            for name in list(self.table.clocked):
                # cost and countdown cells; a row whose GPUs move was rebuilt by _paint within
                # the last tick, and building it again would only find the same text
                view = views.get(name)
                if view is not None and now - painted.get(name, -TICK_SECONDS) >= TICK_SECONDS:
                    self.table.show(view, now)
            self.fleet_bar.refresh_from(self._fleet, now)
            self.arranger.apply()
        billing = self._opened.billing if self._opened else None
        if billing is not None and billing.queued:
            self.start(billing.write_queued(), group="billing")
        self.warnings.idle(now)
        today: float | None = None
        if now - self._budget_checked >= BUDGET_CHECK_SECONDS:
            self._budget_checked = now
            today = self.warnings.budget(now)
            self.warnings.releases()
        self.alerts.tick(now, today)

    def _refresh_balance(self) -> None:
        async def fetch() -> None:
            note = await self.warnings.balance_note()
            if note is not None:
                self.fleet_bar.note = note
            self.alerts.balance = self.warnings.last_balance

        self.run_worker(fetch(), group="balance", exclusive=True, exit_on_error=False)

    def on_row_list_highlighted(self, _event: InstanceTable.Highlighted) -> None:
        self.refresh_panels()

    def on_row_list_selected(self, _event: InstanceTable.Selected) -> None:
        self.action_detail()

    # ----- which actions can run now: the footer, help and the palette
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        check = AVAILABLE.get(action)
        view = self.selected()
        if view is not None and not view.ours and action not in FOR_LAB_NODES:
            return None
        return True if check is None else check(self, view)

    def key_for(self, action_id: str) -> str:
        return self._keys.get(action_id, action(action_id).key)

    def palette_commands(self) -> Iterator[SystemCommand]:
        """Every dashboard action possible right now, with the key that runs it."""
        for a in ACTIONS:
            if a.id == "quit" or self.check_action(a.id, ()) is not True:
                continue
            # after the palette has closed, so the action sees the dashboard on top
            run = partial(self.app.call_after_refresh, self.run_action, a.id)
            where = _("key {key} · action {action}").format(key=key_label(self.key_for(a.id)), action=a.id)
            yield SystemCommand(_(a.label), where, run)

    def help_rows(self) -> list[tuple[str, str, str]]:
        rows = [("up/down j/k", "", _("select instance"))]
        for a in ACTIONS:
            here = self.check_action(a.id, ()) is not False
            line = _(a.help) if here else _("{help} (not here)").format(help=_(a.help))
            rows.append((key_label(self.key_for(a.id)), a.id, line))
        rows.append(("ctrl+p", "", _("command palette: every action by name")))
        return rows

    # ----- actions (one per entry of core/actions.py; the test ties them)
    def action_cursor(self, step: int) -> None:
        table = self.table
        if table.row_count:
            table.move_cursor(row=max(0, min(table.row_count - 1, table.cursor_row + step)))

    def _with_view(self, run: Callable[[InstanceView], object]) -> None:
        view = self.selected()
        if view is not None:
            run(view)

    def action_quit(self) -> None:
        self.power.quit()

    def action_help(self) -> None:
        self.push(HelpScreen(self.help_rows()))

    def action_detail(self) -> None:
        self._with_view(self._open_detail)

    def _open_detail(self, view: InstanceView) -> None:
        detail = self.kept("detail", lambda: DetailScreen(view, self.clock, self._lab_history))
        detail.show(view)
        self.push(detail)

    async def _lab_history(self, name: str, seconds: float, points: int) -> NodeHistory | None:
        return None if self._fleet is None else await self._fleet.lab_history(name, seconds=seconds, points=points)

    def action_run_job(self) -> None:
        self._with_view(lambda v: job_keys.run_job(self, v))

    def action_logs(self) -> None:
        self._with_view(lambda v: job_keys.open_logs(self, v))

    def action_gpu_processes(self) -> None:
        self._with_view(lambda v: process_keys.open_processes(self, v))

    def action_stop_job(self) -> None:
        self._with_view(lambda v: job_keys.stop_job(self, v))

    def action_check(self) -> None:
        if self._fleet is not None:
            fleet = self._fleet
            self._with_view(lambda v: self.push(EnvCheckScreen(v.config, fleet.hosts[v.name])))

    def action_conda(self) -> None:
        if self._fleet is not None:
            fleet = self._fleet
            # the demo's simulated shell does not run the mirror scripts; this machine's does
            mirrors = configured(self) or not self.source.remote
            self._with_view(lambda v: self.push(CondaScreen(v.config, fleet.hosts[v.name], mirrors=mirrors)))

    def action_sync(self) -> None:
        fleet, opened = self._fleet, self._opened
        if fleet is None or opened is None:
            return
        self._with_view(
            lambda v: self.push(
                SyncScreen(
                    v.config,
                    fleet.hosts[v.name],
                    config_path=self.source.config_path or None,
                    password=opened.typed_password(v.name),
                )
            )
        )

    def action_shell(self) -> None:
        self._with_view(lambda v: open_shell(self, v))

    def action_forward(self) -> None:
        if self._fleet is not None:
            fleet = self._fleet
            self._with_view(lambda v: self.push(ForwardScreen(v.name, fleet.hosts[v.name], self.forwards)))

    def action_add(self) -> None:
        instance_keys.add(self)

    def action_edit(self) -> None:
        self._with_view(lambda v: instance_keys.edit(self, v))

    def action_cost(self) -> None:
        opened = self._opened
        if opened is not None and opened.billing is not None:
            self.push(CostScreen(opened.billing, self.currency, self.clock))

    def action_shutdown(self) -> None:
        self._with_view(self.power.shutdown)

    def action_power_on(self) -> None:
        self._with_view(self.starter.power_on)

    def action_shutdown_all(self) -> None:
        self.power.shutdown_all()

    def action_trust_key(self) -> None:
        self._with_view(lambda v: instance_keys.trust_key(self, v))

    def action_fit(self) -> None:
        self.push(FitScreen(lambda: fleet_cards(self._fleet.views.values() if self._fleet else ()), self.currency))

    def action_reconnect(self) -> None:
        self._with_view(lambda v: instance_keys.reconnect(self, v))

    def action_sort(self) -> None:
        self.arranger.sort()

    def action_show_only(self) -> None:
        self.arranger.show()

    def action_find(self) -> None:
        self.arranger.find()
