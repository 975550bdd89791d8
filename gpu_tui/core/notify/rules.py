"""The laptop side's notification decisions: which events fire now, once per occurrence.

The dashboard hands `LaptopRules.evaluate` a snapshot of plain facts every tick; it returns the
notices to send. An event fires when its condition starts to hold and is re-armed only when the
condition clears (the balance topped up, the instance reachable again, idle ended, a new day for
the budget). The messages name the instance by its configured name and say what happened in the
first line (the title), short enough for a phone's lock screen.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from gpu_tui.core.i18n import _
from gpu_tui.core.metrics.lowutil import LowUtil
from gpu_tui.core.money.cost import currency_of
from gpu_tui.core.power import DAY, ReleaseRule, release_line
from gpu_tui.core.units import format_duration_s, format_money, format_rate_per_hour

__all__ = [
    "DEFAULT_EVENTS",
    "EVENTS",
    "EventName",
    "INSTANCE_EVENTS",
    "LAPTOP_EVENTS",
    "FleetFacts",
    "InstanceFacts",
    "LaptopRules",
    "Notice",
    "Once",
    "UNREACHABLE_STATES",
]

EventName = Literal[
    "job_end", "job_failure", "autostop", "idle", "balance", "budget", "unreachable", "low_util", "release"
]
EVENTS: tuple[EventName, ...] = get_args(EventName)
"""Every event a target can subscribe to (`[notify] events`, `notify add --events`)."""
DEFAULT_EVENTS: tuple[EventName, ...] = tuple(e for e in EVENTS if e != "low_util")
"""On unless configured otherwise; low utilisation is advice, not an alarm."""
LAPTOP_EVENTS = ("idle", "balance", "budget", "unreachable", "low_util", "release")
"""Sent by the dashboard while it is open."""
INSTANCE_EVENTS = ("job_end", "job_failure", "autostop", "idle")
"""Sent by the instance itself (the job runner, the autostop watchdog)."""
UNREACHABLE_STATES = frozenset({"offline", "connecting"})
"""Connection states that count as unreachable. Auth and host-key trouble wait for the user
(the dashboard already asks), and `stopped` is a verified shutdown, not a problem."""


@dataclass(frozen=True, slots=True)
class Notice:
    """One message to send: its event, the instance it is about (None: the account), its words."""

    event: str
    instance: str | None
    title: str
    body: str


class Once:
    """Fires once per occurrence: `update(key, True)` is True only on the first True since the
    last False; None (unknown) changes nothing."""

    def __init__(self) -> None:
        self._on: set[Hashable] = set()

    def update(self, key: Hashable, condition: bool | None) -> bool:
        if condition is None:
            return False
        if not condition:
            self._on.discard(key)
            return False
        if key in self._on:
            return False
        self._on.add(key)
        return True


@dataclass(frozen=True, slots=True)
class InstanceFacts:
    name: str
    state: str
    """The connection state word (`online`, `offline`, ...)."""
    hourly_rate: float
    idle_seconds: float | None
    """Billing idle this long (None: not idle)."""
    low_util: LowUtil | None = None
    autodl: bool = False
    billing: bool = False
    last_message: str | None = None
    """Why it is not online, in the dashboard's words (shown in the unreachable message)."""
    currency: str | None = None
    """What `hourly_rate` is in, where not the rules' (settings.currency)."""
    release_at: float | None = None
    """While unreachable: when its provider may release it and its data (core/power.py)."""
    release_rule: ReleaseRule | None = None


@dataclass(frozen=True, slots=True)
class FleetFacts:
    now: float
    day: str
    """Today's local date (the budget is per day)."""
    instances: Sequence[InstanceFacts]
    today_cost: float | None = None
    """Today's cost from the ledger; None when unknown (no ledger, not read this tick)."""
    burn_per_hour: float = 0.0
    balance: float | None = None
    """The AutoDL balance, when known."""
    balance_hours_left: float | None = None
    """How long the AutoDL balance lasts at the AutoDL burn rate; None when unknown or nothing burns."""


@dataclass(slots=True)
class LaptopRules:
    """Thresholds from the settings; state: what already fired and since when each is down."""

    idle_minutes: float
    unreachable_minutes: float
    balance_hours: float
    budget_daily: float
    currency: str
    _once: Once = field(default_factory=Once)
    _down_since: dict[str, float] = field(default_factory=dict)

    def evaluate(self, facts: FleetFacts) -> list[Notice]:
        out: list[Notice] = []
        for inst in facts.instances:
            out += self._instance(inst, facts.now)
        if self._once.update("balance", _below(facts.balance_hours_left, self.balance_hours)):
            out.append(self._balance(facts))
        if self.budget_daily > 0 and facts.today_cost is not None:
            # keyed by day: tomorrow's first pass fires again
            if self._once.update(("budget", facts.day), facts.today_cost > self.budget_daily):
                out.append(self._budget(facts))
        return out

    def _instance(self, inst: InstanceFacts, now: float) -> list[Notice]:
        out: list[Notice] = []
        idle = inst.idle_seconds
        if self._once.update(("idle", inst.name), idle is not None and idle >= self.idle_minutes * 60):
            assert idle is not None
            out.append(
                Notice(
                    "idle",
                    inst.name,
                    _("{name} idle for {duration}").format(name=inst.name, duration=format_duration_s(idle)),
                    _("Every GPU idle and no job running; still billing {rate}.").format(
                        rate=format_rate_per_hour(inst.hourly_rate, currency_of(inst.currency, self.currency))
                    ),
                )
            )
        down = inst.state in UNREACHABLE_STATES
        if not down:
            self._down_since.pop(inst.name, None)
        else:
            self._down_since.setdefault(inst.name, now)
        since = self._down_since.get(inst.name)
        long_down = since is not None and now - since >= self.unreachable_minutes * 60
        if self._once.update(("unreachable", inst.name), long_down):
            assert since is not None
            body = _("It may still be billing; check the provider's console.")
            if inst.last_message:
                body = _("Last error: {error}").format(error=inst.last_message) + "\n" + body
            out.append(
                Notice(
                    "unreachable",
                    inst.name,
                    _("{name} unreachable for {duration}").format(
                        name=inst.name, duration=format_duration_s(now - since)
                    ),
                    body,
                )
            )
        out += self._release(inst, now)
        low = inst.low_util
        if self._once.update(("low_util", inst.name), low is not None and inst.state == "online"):
            assert low is not None
            out.append(Notice("low_util", inst.name, f"{inst.name}: {low.headline()}", low.advice()))
        return out

    def _release(self, inst: InstanceFacts, now: float) -> list[Notice]:
        """Once a day before the provider may release a stopped instance, again an hour before
        (a new date, after it was seen up again, is a new occurrence)."""
        at, rule = inst.release_at, inst.release_rule
        hour = self._once.update(("release_hour", inst.name, at), at is not None and now >= at - 3600)
        day = self._once.update(("release_day", inst.name, at), at is not None and now >= at - DAY)
        if not (hour or day) or at is None or rule is None:
            return []
        title = _("{name}: its data may be released in {duration}").format(
            name=inst.name, duration=format_duration_s(max(0.0, at - now))
        )
        return [Notice("release", inst.name, title, release_line(inst.name, at, now, rule))]

    def _balance(self, facts: FleetFacts) -> Notice:
        names = [i.name for i in facts.instances if i.autodl and i.billing]
        title = _("AutoDL balance runs out in ~{duration}").format(
            duration=format_duration_s((facts.balance_hours_left or 0) * 3600)
        )
        body = _("{balance} left; {names} billing. Top up or shut down.").format(
            balance=format_money(facts.balance, self.currency), names=", ".join(names) or "-"
        )
        return Notice("balance", None, title, body)

    def _budget(self, facts: FleetFacts) -> Notice:
        names = [i.name for i in facts.instances if i.billing]
        title = _("Daily budget passed: {cost} of {budget}").format(
            cost=format_money(facts.today_cost, self.currency), budget=format_money(self.budget_daily, self.currency)
        )
        body = _("Burning {rate}: {names}.").format(
            rate=format_rate_per_hour(facts.burn_per_hour, self.currency), names=", ".join(names) or "-"
        )
        return Notice("budget", None, title, body)


def _below(value: float | None, limit: float) -> bool | None:
    return None if value is None else value < limit
