"""The dashboard's power keys: `S` shut the selected instance down, `Q` shut every billing
instance down and quit, and the `q` guard while instances still bill."""

from __future__ import annotations

import time

from rich.text import Text

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.i18n import _
from gpu_tui.core.money.cost import per_currency
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_rates_per_hour
from gpu_tui.services.fleet import InstanceView
from gpu_tui.services.power import ShutdownResult, pull_before
from gpu_tui.services.providers.ops import shutdown_fleet
from gpu_tui.ui.dashboard.context import DashboardContext
from gpu_tui.ui.format import text_parts
from gpu_tui.ui.screens.power import QuitGuardScreen, ShutdownConfirmScreen, ShutdownReportScreen, report_text

__all__ = ["PowerKeys"]


def _jobs_line(views: list[InstanceView]) -> Text:
    t = Text()
    for v in views:
        running = [j for j in v.jobs if j.state == "running"]
        if running:
            t.append(f"\n  {v.name}: ", style="bold")
            t.append(", ".join(printable(j.name or j.id) for j in running), style="yellow")
            t.append(" " + _("running: it stops with the instance"), style="dim")
    return t


class PowerKeys:
    """Holds which instances are being shut down, so `S` is not offered twice for one."""

    def __init__(self, ctx: DashboardContext) -> None:
        self._ctx = ctx
        self.shutting: set[str] = set()

    def possible(self) -> bool:
        """Only for configured instances: the demo's and this machine's are not ours to power off."""
        opened = self._ctx.opened
        return bool(self._ctx.source.remote and opened is not None and opened.make_host is not None)

    def billing(self) -> list[InstanceView]:
        fleet = self._ctx.fleet
        # a lab's nodes (Prometheus) are not the user's to power off
        return [v for v in fleet.views.values() if v.billing and v.ours] if fleet else []

    def check(self, action: str, view: InstanceView | None) -> bool | None:
        if not self.possible():
            return False
        if action == "shutdown":
            return True if view is not None and view.billing and view.ours and view.name not in self.shutting else None
        return True if self.billing() else None  # shutdown_all

    def _rate_text(self, views: list[InstanceView]) -> str:
        default = self._ctx.currency  # never one sum across currencies
        return format_rates_per_hour(
            per_currency(((v.config.bills_in(default), v.config.hourly_rate) for v in views), default)
        )

    def shutdown(self, view: InstanceView) -> None:
        if not self.possible():
            return
        sync = view.config.sync
        can_pull = sync.local is not None
        pull_line = (
            _("p pulls {remote} into {local} first.").format(
                remote=sync.remote or view.config.workdir or "~", local=sync.local
            )
            if can_pull
            else ""
        )
        question = Text.assemble(
            *text_parts(_("Shut down {name} ({rate})?"), name=(view.name, "bold"), rate=self._rate_text([view])),
            _jobs_line([view]),
            ("\n\n" + pull_line if pull_line else "", ""),
            (
                "\n\n"
                + _(
                    "The provider's shutdown runs on the instance; it counts as stopped once the link "
                    "closes and a fresh login fails."
                ),
                "dim",
            ),
        )

        def answer(choice: str | None) -> None:
            if choice is not None:
                self._shut([view.config], quit_after=False, pull=choice == "pull")

        self._ctx.push(ShutdownConfirmScreen(question, can_pull=can_pull), answer)

    def shutdown_all(self) -> None:
        views = self.billing()
        if not views or not self.possible():
            return
        pulls = [v.name for v in views if v.config.sync.local is not None]
        pull_line = _("p pulls the results of {names} first.").format(names=", ".join(pulls)) if pulls else ""
        question = Text.assemble(
            _("Shut down every billing instance, then quit?") + "\n",
            (", ".join(v.name for v in views), "bold"),
            f"  ({self._rate_text(views)})",
            _jobs_line(views),
            ("\n\n" + pull_line if pull_line else "", ""),
        )

        def answer(choice: str | None) -> None:
            if choice is not None:
                self._shut([v.config for v in views], quit_after=True, pull=choice == "pull")

        self._ctx.push(
            ShutdownConfirmScreen(
                question, can_pull=bool(pulls), yes=_("Shut all down"), pull=_("Pull results, then shut all down")
            ),
            answer,
        )

    def quit(self) -> None:
        """`q`: quits at once unless instances still bill; then the guard asks."""
        views = self.billing() if self.possible() else []
        if not views:
            self._ctx.app.exit()
            return

        def answer(choice: str | None) -> None:
            if choice == "quit":
                self._ctx.app.exit()
            elif choice in ("shutdown_all", "pull_all"):  # the guard was the confirmation
                self._shut([v.config for v in self.billing()], quit_after=True, pull=choice == "pull_all")

        can_pull = any(v.config.sync.local is not None for v in views)
        self._ctx.push(QuitGuardScreen([v.name for v in views], self._rate_text(views), can_pull=can_pull), answer)

    def _shut(self, targets: list[InstanceConfig], *, quit_after: bool, pull: bool = False) -> None:
        names = [i.name for i in targets]
        self.shutting.update(names)
        listed = ", ".join(names)
        how = _("pulling results, then shutting down {names}…") if pull else _("shutting down {names}…")
        self._ctx.notify(how.format(names=listed), timeout=5, markup=False)
        self._ctx.start(self._shut_worker(targets, quit_after, pull), group="shutdown")

    async def _shut_worker(self, targets: list[InstanceConfig], quit_after: bool, pull: bool) -> None:
        opened = self._ctx.opened
        assert opened is not None and opened.make_host is not None  # possible() was checked
        make_host = opened.make_host
        before = pull_before(make_host, self._ctx.source.config_path, opened.typed_password) if pull else None
        try:
            # an imported instance SSH cannot reach is stopped through its provider's API instead
            results = await shutdown_fleet(targets, make_host, opened.providers, via_api=False, before=before)
        finally:
            self.shutting.difference_update(i.name for i in targets)
        fleet = self._ctx.fleet
        for r in results:
            if r.stopped and fleet is not None:
                fleet.mark_stopped(r.name)
                if opened.billing is not None:
                    opened.billing.shut_down(r.name, time.time())
        self._report(results, quit_after)

    def _report(self, results: list[ShutdownResult], quit_after: bool) -> None:
        if not quit_after:
            self._ctx.push(ShutdownReportScreen(results))
            return
        # the report stays on the terminal after the dashboard is gone
        self._ctx.push(
            ShutdownReportScreen(results, _("Quit")), lambda _: self._ctx.app.exit(message=report_text(results))
        )
