"""What the dashboard says unasked about money: idle instances, the daily budget, and the
AutoDL, RunPod and Vast.ai balances with how long each lasts. The budget is in
settings.currency and counts only what bills in it (gpu-tui converts nothing)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from rich.text import Text

from gpu_tui.core.actions import key_label
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import _
from gpu_tui.core.money.cost import currency_of, only_in, others_than, per_currency
from gpu_tui.core.power import release_at, rule_for
from gpu_tui.core.providers import AccountBalance
from gpu_tui.core.units import (
    format_duration_s,
    format_local_date,
    format_money,
    format_money_sum,
    format_rate_per_hour,
)
from gpu_tui.services.providers import LABELS
from gpu_tui.services.providers.autodl_balance import hours_left
from gpu_tui.ui.dashboard.context import DashboardContext

__all__ = ["MoneyWarnings"]

log = logging.getLogger(__name__)


class MoneyWarnings:
    """Remembers what it already said: one idle warning per idle stretch, one budget warning a day."""

    def __init__(self, ctx: DashboardContext) -> None:
        self._ctx = ctx
        self._idle_warned: set[str] = set()
        self._budget_warned: str | None = None
        self.last_balance: tuple[float, float | None] | None = None
        """The AutoDL balance and the hours it lasts (None: nothing burns), once fetched."""

    def idle(self, now: float) -> None:
        """One warning per idle stretch, when it passes idle_minutes."""
        fleet, opened = self._ctx.fleet, self._ctx.opened
        if fleet is None or opened is None:
            return
        s = opened.settings.settings
        for view in fleet.views.values():
            idle = view.idle_seconds(now) if view.ours else None  # a lab's idle nodes: the summary line
            if idle is None:
                self._idle_warned.discard(view.name)
            elif idle >= s.idle_minutes * 60 and view.name not in self._idle_warned:
                self._idle_warned.add(view.name)
                self._ctx.notify(
                    _(
                        "{name} has been idle {duration} (every GPU under {percent}%, no job running) and still "
                        "bills {rate}. {key} shuts it down."
                    ).format(
                        name=view.name,
                        duration=format_duration_s(idle),
                        percent=s.idle_util_percent,
                        rate=format_rate_per_hour(
                            view.config.hourly_rate, currency_of(view.config.currency, s.currency)
                        ),
                        key=key_label(self._ctx.key_for("shutdown")),
                    ),
                    title=_("idle"),
                    severity="warning",
                    timeout=30,
                    markup=False,
                )

    def releases(self) -> None:
        """Each unreachable instance's release date, from the ledger's last sighting and its
        provider's rule (shown by the host panel, sent a day and an hour before)."""
        opened, fleet = self._ctx.opened, self._ctx.fleet
        if opened is None or opened.billing is None or fleet is None:
            return
        views = [v for v in fleet.views.values() if v.ours]
        down = [v for v in views if v.state != "online"]
        for v in views:
            v.release_at = None
        if not down:
            return
        try:
            seen = opened.billing.last_seen_up()
        except GpuTuiError as exc:
            log.warning("release dates: %s", exc)
            return
        for v in down:
            v.release_at = release_at(rule_for(v.config.provider, v.config.release_days), seen.get(v.name), up=False)

    def budget(self, now: float) -> float | None:
        """Once a day, when today's cost in settings.currency passes settings.budget_daily (what
        bills in other currencies is named, not counted); returns today's cost in
        settings.currency (None when there is no budget or no ledger), for the notifications."""
        opened, fleet = self._ctx.opened, self._ctx.fleet
        if opened is None or opened.billing is None or opened.settings.settings.budget_daily <= 0:
            return None
        s, billing = opened.settings.settings, opened.billing
        try:
            rows = billing.per_period(now, currency=s.currency)
        except GpuTuiError as exc:
            log.warning("budget check: %s", exc)
            return None
        sums = per_currency(((currency_of(r.currency, s.currency), r.today) for r in rows), s.currency)
        today = only_in(sums, s.currency)
        day = format_local_date(now)
        if today > s.budget_daily and self._budget_warned != day:
            self._budget_warned = day
            burn = only_in(fleet.burn_by_currency(s.currency), s.currency) if fleet else 0
            message = _("today's cost {cost} has passed your daily budget of {budget} (burning {rate})").format(
                cost=format_money(today, s.currency),
                budget=format_money(s.budget_daily, s.currency),
                rate=format_rate_per_hour(burn, s.currency),
            )
            others = [(c, v) for c, v in others_than(sums, s.currency) if v > 0]
            if others:
                message += " " + _(
                    "The budget is in {currency}: {others} today in other currencies is not counted."
                ).format(currency=s.currency, others=format_money_sum(others))
            self._ctx.notify(message, title=_("budget"), severity="error", timeout=60, markup=False)
        return today

    async def balance_note(self) -> Text | None:
        """The fleet bar's balance note: AutoDL's, RunPod's and Vast.ai's balances, each with the
        hours it lasts at that provider's burn rate."""
        opened = self._ctx.opened
        if opened is None or (opened.balance is None and not opened.balances):
            return None
        notes = [await self._autodl_note()] if opened.balance is not None else []
        for fetch in opened.balances:
            notes.append(await self._provider_note(fetch))
        note = Text()
        for n, part in enumerate(p for p in notes if p is not None):
            if n:
                note.append(" · ", style="dim")
            note.append_text(part)
        return note

    def _burn(self, provider: str) -> float:
        fleet = self._ctx.fleet
        views = fleet.views.values() if fleet else ()
        return sum(v.config.hourly_rate for v in views if v.billing and v.config.provider == provider)

    @staticmethod
    def _left(note: Text, left: float | None) -> Text:
        if left is not None:
            note.append(
                " " + _("~{duration} left").format(duration=format_duration_s(left * 3600)),
                style="bold red" if left < 24 else "",
            )
        return note

    async def _autodl_note(self) -> Text | None:
        opened = self._ctx.opened
        if opened is None or opened.balance is None:
            return None
        currency = opened.settings.settings.currency
        try:
            balance = await opened.balance()
        except GpuTuiError as exc:
            log.warning("autodl balance: %s", exc)
            return Text(_("AutoDL balance: {error}").format(error=_(exc.title)), style="dim")
        left = hours_left(balance, self._burn("autodl"))
        self.last_balance = (balance.usable, left)  # the balance event (notify) reads it
        note = Text(_("AutoDL {balance}").format(balance=format_money(balance.usable, currency)))
        return self._left(note, left)

    async def _provider_note(self, fetch: Callable[[], Awaitable[AccountBalance]]) -> Text | None:
        try:
            b = await fetch()
        except GpuTuiError as exc:
            log.warning("provider balance: %s", exc)
            return Text(_("balance: {error}").format(error=_(exc.title)), style="dim")
        note = Text(f"{LABELS[b.provider]} {format_money(b.balance, b.currency)}")
        return self._left(note, b.hours_left(b.spend_per_hour or self._burn(b.provider) or None))
