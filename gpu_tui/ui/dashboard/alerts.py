"""The laptop side of notifications, while the dashboard is open: balance, budget, unreachable,
idle and low utilisation go to the user's targets (phone, chat, e-mail).

The decisions are core/notify/rules.py's; the sending is services/notify/send.py's, in a worker.
This handler only gathers the facts each tick and starts the sends.
"""

from __future__ import annotations

import asyncio
import logging
import math

from gpu_tui.core.i18n import _
from gpu_tui.core.metrics.lowutil import LowUtil, assess
from gpu_tui.core.money.cost import only_in
from gpu_tui.core.notify.rules import FleetFacts, InstanceFacts, LaptopRules, Notice
from gpu_tui.core.power import rule_for
from gpu_tui.core.units import format_local_date
from gpu_tui.services.fleet import InstanceView
from gpu_tui.services.notify.instance import INSTANCE_EVENTS
from gpu_tui.services.notify.send import send_all
from gpu_tui.services.notify.targets import NotifySetup, for_event
from gpu_tui.ui.dashboard.context import DashboardContext

__all__ = ["LaptopAlerts", "instance_sends"]

log = logging.getLogger(__name__)

LOW_UTIL_SECONDS = 30.0
"""How often the low-utilisation rule reads each instance's history (it changes slowly)."""
SEND_TIMEOUT = 10.0
SEND_ATTEMPTS = 2


def instance_sends(view: InstanceView, event: str) -> bool:
    """Whether the instance sends `event` itself, so that the laptop does not send it too. The
    instance sends job_end, job_failure and autostop (services/notify/instance.INSTANCE_EVENTS),
    which the laptop never sends; every event the laptop sends (balance, budget, unreachable,
    idle, low_util) is the laptop's alone, so none is sent twice."""
    return event in INSTANCE_EVENTS


class LaptopAlerts:
    """Gathers the facts each tick, asks the rules, and sends what they decide."""

    def __init__(self, ctx: DashboardContext) -> None:
        self._ctx = ctx
        self._rules: LaptopRules | None = None
        self._setup: NotifySetup | None = None
        self._low: dict[str, LowUtil | None] = {}
        self._low_at = -math.inf
        self.balance: tuple[float, float | None] | None = None
        """The AutoDL balance and the hours it lasts (None: nothing burns), once fetched."""

    def begin(self) -> None:
        opened = self._ctx.opened
        if opened is None or opened.notify is None:
            return
        s, n = opened.settings.settings, opened.settings.notify
        self._rules = LaptopRules(
            idle_minutes=s.idle_minutes,
            unreachable_minutes=n.unreachable_minutes,
            balance_hours=n.balance_hours,
            budget_daily=s.budget_daily,
            currency=s.currency,
        )
        load = opened.notify

        async def fetch() -> None:
            self._setup = await asyncio.to_thread(load)  # the keyring blocks

        self._ctx.start(fetch(), group="notify-load")

    @property
    def wants_low_util(self) -> bool:
        return self._setup is not None and bool(for_event(self._setup.targets, "low_util"))

    def tick(self, now: float, today_cost: float | None) -> None:
        fleet, rules, setup = self._ctx.fleet, self._rules, self._setup
        if fleet is None or rules is None or setup is None or not setup.targets:
            return
        # a lab's nodes (Prometheus) are watched, not rented: they send nothing to the user's phone
        views = [v for v in fleet.views.values() if v.ours]
        opened = self._ctx.opened
        idle_below = opened.settings.settings.idle_util_percent if opened else 5
        if self.wants_low_util and now - self._low_at >= LOW_UTIL_SECONDS:
            self._low_at = now
            self._low = {v.name: assess(v.history, now, idle_below=idle_below) for v in views}
        facts = FleetFacts(
            now=now,
            day=format_local_date(now),
            today_cost=today_cost,
            # the budget and its burn are settings.currency's only: nothing is converted
            burn_per_hour=only_in(fleet.burn_by_currency(rules.currency), rules.currency),
            instances=[
                InstanceFacts(
                    name=v.name,
                    state=v.shown_state,
                    hourly_rate=v.config.hourly_rate,
                    idle_seconds=v.idle_seconds(now),
                    low_util=self._low.get(v.name),
                    autodl=v.config.provider == "autodl",
                    billing=v.billing,
                    last_message=v.message,
                    currency=v.config.currency,
                    release_at=v.release_at,
                    release_rule=rule_for(v.config.provider, v.config.release_days),
                )
                for v in views
            ],
            balance=self.balance[0] if self.balance else None,
            # nothing burning: the balance does not run out (math.inf re-arms the event)
            balance_hours_left=None
            if self.balance is None
            else (math.inf if self.balance[1] is None else self.balance[1]),
        )
        for notice in rules.evaluate(facts):
            view = fleet.views.get(notice.instance) if notice.instance else None
            if view is not None and instance_sends(view, notice.event):
                continue
            wanted = for_event(setup.targets, notice.event)
            if wanted:
                self._ctx.start(self._send(notice, setup), group="notify")

    async def _send(self, notice: Notice, setup: NotifySetup) -> None:
        wanted = for_event(setup.targets, notice.event)
        results = await send_all(
            wanted,
            notice.title,
            notice.body,
            instance=notice.instance or "",
            wechat_token=setup.wechat_token,
            timeout=SEND_TIMEOUT,
            attempts=SEND_ATTEMPTS,
        )
        failed = [r for r in results if not r.ok]
        if failed:
            self._ctx.notify(
                _("could not send {event!r} to {targets}").format(
                    event=notice.event, targets=", ".join(f"{r.target.shown} ({r.error})" for r in failed)
                ),
                title=_("notification"),
                severity="warning",
                timeout=20,
                markup=False,
            )
