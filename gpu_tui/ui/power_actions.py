"""The dashboard's power keys: `S` shut the selected instance down, `Q` shut every billing
instance down and quit, and the `q` guard while instances still bill.

A mixin for GpuTuiApp so app.py stays about layout and updates.
"""

from __future__ import annotations

import time

from rich.text import Text

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.cost import format_money
from gpu_tui.core.text import printable
from gpu_tui.services.fleet import Fleet, InstanceView
from gpu_tui.services.power import ShutdownResult, pull_before, shutdown_many
from gpu_tui.ui.screens.power import QuitGuardScreen, ShutdownConfirmScreen, ShutdownReportScreen, report_text

__all__ = ["PowerActions"]


def _jobs_line(views: list[InstanceView]) -> Text:
    t = Text()
    for v in views:
        running = [j for j in v.jobs if j.state == "running"]
        if running:
            t.append(f"\n  {v.name}: ", style="bold")
            t.append(", ".join(printable(j.name or j.id) for j in running), style="yellow")
            t.append(" running: it stops with the instance", style="dim")
    return t


class PowerActions:
    """Mixed into GpuTuiApp (fleet, opened, source, notify, push_screen, run_worker, exit)."""

    fleet: Fleet | None
    _shutting: set[str]

    def _can_power(self) -> bool:
        opened = self.opened  # type: ignore[attr-defined]
        return bool(self.source.remote and opened is not None and opened.make_host is not None)  # type: ignore[attr-defined]

    def _billing(self) -> list[InstanceView]:
        return [v for v in self.fleet.views.values() if v.billing] if self.fleet else []

    def _power_check(self, action: str, view: InstanceView | None) -> bool | None:
        if not self._can_power():
            return False
        if action == "shutdown":
            return True if view is not None and view.billing and view.name not in self._shutting else None
        return True if self._billing() else None  # shutdown_all

    def _rate_text(self, views: list[InstanceView]) -> str:
        currency = self.opened.settings.settings.currency  # type: ignore[attr-defined]
        return f"{format_money(sum(v.config.hourly_rate for v in views), currency)}/h"

    def action_shutdown(self) -> None:
        view = self.selected()  # type: ignore[attr-defined]
        if view is None or not self._can_power():
            return
        can_pull = view.config.sync.local is not None
        question = Text.assemble(
            "Shut down ", (view.name, "bold"), f" ({self._rate_text([view])})?", _jobs_line([view]),
            (f"\n\np pulls {view.config.sync.remote or view.config.workdir or '~'} into {view.config.sync.local} first."
             if can_pull else "", ""),
            ("\n\nThe provider's shutdown runs on the instance; it counts as stopped once the link "
             "closes and a fresh login fails.", "dim"),
        )

        def answer(choice: str | None) -> None:
            if choice is not None:
                self._shut([view.config], quit_after=False, pull=choice == "pull")

        self.push_screen(ShutdownConfirmScreen(question, can_pull=can_pull), answer)  # type: ignore[attr-defined]

    def action_shutdown_all(self) -> None:
        views = self._billing()
        if not views or not self._can_power():
            return
        pulls = [v.name for v in views if v.config.sync.local is not None]
        question = Text.assemble(
            "Shut down every billing instance, then quit?\n", (", ".join(v.name for v in views), "bold"),
            f"  ({self._rate_text(views)})", _jobs_line(views),
            (f"\n\np pulls the results of {', '.join(pulls)} first." if pulls else "", ""),
        )

        def answer(choice: str | None) -> None:
            if choice is not None:
                self._shut([v.config for v in views], quit_after=True, pull=choice == "pull")

        self.push_screen(ShutdownConfirmScreen(question, can_pull=bool(pulls), yes="Shut all down"), answer)  # type: ignore[attr-defined]

    async def action_quit(self) -> None:
        views = self._billing() if self._can_power() else []
        if not views:
            self.exit()  # type: ignore[attr-defined]
            return

        def answer(choice: str | None) -> None:
            if choice == "quit":
                self.exit()  # type: ignore[attr-defined]
            elif choice in ("shutdown_all", "pull_all"):  # the guard was the confirmation
                self._shut([v.config for v in self._billing()], quit_after=True, pull=choice == "pull_all")

        can_pull = any(v.config.sync.local is not None for v in views)
        self.push_screen(QuitGuardScreen([v.name for v in views], self._rate_text(views), can_pull=can_pull), answer)  # type: ignore[attr-defined]

    def _shut(self, targets: list[InstanceConfig], *, quit_after: bool, pull: bool = False) -> None:
        names = [i.name for i in targets]
        self._shutting.update(names)
        how = "pulling results, then shutting down" if pull else "shutting down"
        self.notify(f"{how} {', '.join(names)}…", timeout=5)  # type: ignore[attr-defined]
        self.run_worker(self._shut_worker(targets, quit_after, pull), group="shutdown", exit_on_error=False)  # type: ignore[attr-defined]

    async def _shut_worker(self, targets: list[InstanceConfig], quit_after: bool, pull: bool) -> None:
        opened = self.opened  # type: ignore[attr-defined]
        make_host = opened.make_host
        before = pull_before(make_host, self.source.config_path, opened.typed_password) if pull else None  # type: ignore[attr-defined]
        try:
            results = await shutdown_many(targets, make_host, before=before)
        finally:
            self._shutting.difference_update(i.name for i in targets)
        ledger = self.opened.ledger  # type: ignore[attr-defined]
        for r in results:
            if r.stopped and self.fleet is not None:
                self.fleet.mark_stopped(r.name)
                if ledger is not None:
                    ledger.close(r.name, time.time(), "shutdown")
        self._report(results, quit_after)

    def _report(self, results: list[ShutdownResult], quit_after: bool) -> None:
        if not quit_after:
            self.push_screen(ShutdownReportScreen(results))  # type: ignore[attr-defined]
            return
        # the report stays on the terminal after the dashboard is gone
        self.push_screen(ShutdownReportScreen(results, "Quit"),  # type: ignore[attr-defined]
                         lambda _: self.exit(message=report_text(results)))  # type: ignore[attr-defined]
