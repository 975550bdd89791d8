"""`GpuTuiApp`: opens a fleet source, shows it on the dashboard screen, and closes it cleanly.

The dashboard's keys, layout and painting belong to `DashboardScreen`; the App keeps what
outlives any one screen: the source, the fleet's monitors, the welcome flow, and the report of
a worker that failed.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Callable, Iterable

from textual import events, work
from textual.app import App, SystemCommand
from textual.command import CommandPalette
from textual.screen import Screen
from textual.worker import Worker, WorkerCancelled, WorkerState

from gpu_tui.core.errors import GpuTuiError, error_line
from gpu_tui.core.i18n import _
from gpu_tui.services.fleet import Fleet
from gpu_tui.ui.bindings import system_command, translate_bindings
from gpu_tui.ui.dashboard import DashboardScreen
from gpu_tui.ui.gcpace import FULL_COLLECTION_SECONDS, KEY_HOLD_SECONDS, GcPacing
from gpu_tui.ui.screens import WelcomeScreen
from gpu_tui.ui.screens.add import AddInstanceScreen
from gpu_tui.ui.source import FleetSource, Opened

__all__ = ["GpuTuiApp"]

log = logging.getLogger(__name__)

CLOSE_SECONDS = 5.0
"""How long the monitors get to clean up (kill local subprocesses, close channels) on exit."""
FREEZE_AFTER_SECONDS = 15.0
"""When the objects of start-up (modules, CSS, widgets, the fleet's connections) leave the
cyclic GC's care (gc.freeze): a full collection over them took 62 ms (measured on the demo), a
key press that lands in one waits for it. From then on the full collections of later objects
come from a timer (ui/gcpace), not from inside a screen's first paint."""


class GpuTuiApp(App[str | None]):
    """Exits with None, or "demo"/"local"/"config" when the welcome screen asked for another source."""

    TITLE = "gpu-tui"

    def __init__(
        self,
        source: FleetSource,
        *,
        keys: dict[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        translate_bindings(self)  # ctrl+q, and the footer's palette key
        self.source = source
        self.clock = clock
        self.fleet: Fleet | None = None
        self.opened: Opened | None = None
        self.dashboard = DashboardScreen(source, clock=clock, keys=dict(keys or {}))
        self._fleet_worker: Worker[None] | None = None
        self.gc_pacing = GcPacing()
        if keys:
            self.set_keymap(keys)

    def get_default_screen(self) -> Screen[None]:
        return self.dashboard

    async def on_mount(self) -> None:
        if self.source.empty:
            self.push_screen(WelcomeScreen(self.source.config_path, self.source.importable), self._welcome_done)
            return
        opened = self.opened = await self.source.open()
        s = opened.settings.settings
        self.fleet = Fleet(
            opened.hosts,
            refresh_seconds=s.refresh_seconds,
            on_change=self.dashboard.fleet_event,
            clock=self.clock,
            idle_util_percent=s.idle_util_percent,
            labs=opened.labs,
        )
        self.dashboard.attach(opened, self.fleet)
        self._fleet_worker = self.run_worker(self.fleet.run(), name="fleet", exit_on_error=False)
        self.set_timer(FREEZE_AFTER_SECONDS, self._settled)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and self.gc_pacing.hold():  # a key's paint before any collection
            self.set_timer(KEY_HOLD_SECONDS, self.gc_pacing.release)
        await super().on_event(event)

    def _settled(self) -> None:
        gc.freeze()
        self.gc_pacing.start()
        self.set_interval(FULL_COLLECTION_SECONDS, self.gc_pacing.collect)

    async def on_unmount(self) -> None:
        # The ticks must stop before the widgets they paint go away, and the monitors must finish
        # their clean-up while the loop still runs.
        self.dashboard.stop()
        self.workers.cancel_all()
        if self._fleet_worker is not None:
            with contextlib.suppress(TimeoutError, WorkerCancelled):
                await asyncio.wait_for(self.workers.wait_for_complete([self._fleet_worker]), CLOSE_SECONDS)
        if self.opened is not None and self.opened.billing is not None:
            self.opened.billing.close()  # writes what it held back
        if self.opened is not None and self.opened.close is not None:
            await self.opened.close()
        self.gc_pacing.stop()
        gc.unfreeze()  # what start-up left is garbage now (an app built again in this process: the tests)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # workers run with exit_on_error=False so one failed action cannot close the dashboard;
        # what failed still reaches the log and the screen
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            err = event.worker.error
            log.error("worker %s failed", event.worker.name, exc_info=err)
            self.notify(
                f"{event.worker.name}: {error_line(err)}", title=_("internal error"), severity="error", markup=False
            )

    async def action_quit(self) -> None:
        # ctrl+q and the palette's Quit go through the dashboard's still-billing guard too
        if self.fleet is not None:
            self.dashboard.power.quit()
        else:
            self.exit()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The command palette (ctrl+p): Textual's own commands, then on the dashboard every
        action possible right now, with the key that runs it."""
        yield from (system_command(c) for c in super().get_system_commands(screen))
        if screen is self.dashboard:
            yield from self.dashboard.palette_commands()

    def action_command_palette(self) -> None:
        if self.use_command_palette and not isinstance(self.screen, CommandPalette):
            self.push_screen(CommandPalette(placeholder=_("Search for commands…"), id="--command-palette"))

    # ----- the welcome screen (nothing configured yet)
    def _welcome_done(self, choice: str | None) -> None:
        if choice == "add":
            self._add_first()
            return
        if choice == "import":
            self._import_first()
            return
        self.exit(None if choice in (None, "quit") else choice)

    @work(exit_on_error=False)
    async def _import_first(self) -> None:
        """The welcome screen's import: every instance of the accounts, then the CLI reopens the config."""
        assert self.source.import_all is not None
        try:
            line = await self.source.import_all()
        except GpuTuiError as exc:
            self.notify(exc.line(), title=_("import"), severity="error", timeout=30, markup=False)
            self.push_screen(WelcomeScreen(self.source.config_path, self.source.importable), self._welcome_done)
            return
        self.exit("config", message=line)

    @work(exit_on_error=False)
    async def _add_first(self) -> None:
        """The welcome screen's add: once the config has an instance, the CLI reopens it."""
        opened = await self.source.open()
        if opened.onboarder is None:
            return
        added = await self.push_screen_wait(AddInstanceScreen(opened.onboarder))
        if added is None:
            self.push_screen(WelcomeScreen(self.source.config_path, self.source.importable), self._welcome_done)
        else:
            self.exit("config")
