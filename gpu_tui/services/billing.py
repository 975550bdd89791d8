"""Billing: the one way anything reaches the cost ledger to write it.

Whatever sees an instance (the dashboard's stats stream, `status`, a subcommand's connect, a
power-on, a verified shutdown) tells a `Billing` what it saw; what is written, and when, is
decided here, not by the caller:

- an instance seen up `uptime` seconds at `at` bills from its boot (`at - uptime`) to `at`, at
  its config's `hourly_rate`, in its own `currency` (stored as NULL when it has none: then it
  bills in settings.currency, whatever that is when the ledger is read);
- a power-on is a sighting of a fresh boot (uptime 0), at the price the start reported;
- a verified shutdown ends the instance's interval (services/ledger.py `close`).

The dashboard sees every instance every 5 s: its `Billing` (`for_dashboard`) writes a repeated
sighting of the same boot, rate and currency at most once per DASHBOARD_WRITE_SECONDS per
instance, and a reboot, a new rate or a new currency at once; what it held back is written
before each read, before a shutdown is recorded and on `close`. The dashboard queues its
sightings (`queue`) and writes them once a tick in a thread (`write_queued`): a SQLite commit,
and now and then a checkpoint's fsync, never holds up a key press. A one-shot command's
`Billing` writes every sighting at once.

Writes never raise (a failure is logged and returns False: the command the user asked for, or
the dashboard, matters more than the ledger); reads raise `LedgerError`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from datetime import date, tzinfo
from pathlib import Path

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.money.ledgermath import Interval, NameTotal, PeriodRow
from gpu_tui.services.ledger import Ledger, LedgerError

__all__ = ["Billing", "LedgerError", "DASHBOARD_WRITE_SECONDS"]

DASHBOARD_WRITE_SECONDS = 15.0
"""The dashboard sees uptime every 5 s per instance; one write per 15 s of it is plenty (a
crash loses at most that much billing time, which the next sighting of the boot restores)."""


class Billing:
    """The cost ledger at `ledger_file`, as everything but the ledger's own tests sees it.
    `hold_seconds` > 0 holds back repeated sightings (see the module docstring)."""

    def __init__(self, ledger_file: Path, *, hold_seconds: float = 0.0, tz: tzinfo | None = None) -> None:
        self._ledger = Ledger(ledger_file, min_write_interval=hold_seconds, tz=tz)
        self._queued: list[tuple[InstanceConfig, float | None, float]] = []

    @classmethod
    def for_dashboard(cls, ledger_file: Path) -> Billing:
        return cls(ledger_file, hold_seconds=DASHBOARD_WRITE_SECONDS)

    @property
    def path(self) -> Path:
        return self._ledger.path

    def __enter__(self) -> Billing:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Write what was queued and held back and close the file (reopened on next use)."""
        self._write_queue()
        self._ledger.close_db()

    # ------------------------------------------------------------------ what was seen

    def seen_up(self, inst: InstanceConfig, uptime_seconds: float, at: float) -> bool:
        """`inst` has been up `uptime_seconds` at `at`. False when it could not be written."""
        return self.seen_many([(inst, uptime_seconds, at)])

    def seen_many(self, sightings: Iterable[tuple[InstanceConfig, float | None, float]]) -> bool:
        """Several `(instance, uptime_seconds, at)` sightings, in one transaction; an unknown
        uptime (None) is no sighting."""
        return self._ledger.observe_many(
            (inst.name, uptime, inst.hourly_rate, at, inst.currency)
            for inst, uptime, at in sightings
            if uptime is not None
        )

    def queue(self, inst: InstanceConfig, uptime_seconds: float | None, at: float) -> None:
        """`seen_up`, written by the next `write_queued` (or any read, flush or close)."""
        self._queued.append((inst, uptime_seconds, at))

    @property
    def queued(self) -> int:
        return len(self._queued)

    async def write_queued(self) -> bool:
        """Write the queued sightings in one transaction, off the event loop (the ledger locks
        its connection, so a read on the loop meanwhile waits for the commit, never interleaves)."""
        batch, self._queued = self._queued, []  # taken on the loop, where `queue` appends
        return await asyncio.to_thread(self.seen_many, batch) if batch else True

    def _write_queue(self) -> bool:
        batch, self._queued = self._queued, []
        return self.seen_many(batch) if batch else True

    def powered_on(self, inst: InstanceConfig, at: float, *, rate: float | None = None) -> bool:
        """`inst` was just started through its provider: it bills from `at`, at `rate` (what the
        start reported; None: the config's)."""
        return self._ledger.observe(inst.name, 0.0, inst.hourly_rate if rate is None else rate, at, inst.currency)

    def shut_down(self, name: str, at: float) -> bool:
        """A verified shutdown of `name` at `at` (only a verified one: an unverified shutdown may
        still be billing). False when nothing was open or it could not be written."""
        self._write_queue()
        return self._ledger.close(name, at, "shutdown")

    def flush(self) -> bool:
        """Write what was queued and held back now (another process is about to read the file)."""
        queued = self._write_queue()
        return self._ledger.flush() and queued

    # ------------------------------------------------------------------ reads (after a flush)

    def intervals(self, since: float | None = None, *, currency: str | None = None) -> list[Interval]:
        self.flush()
        return self._ledger.intervals(since, currency=currency)

    def last_seen_up(self) -> dict[str, float]:
        self.flush()
        return self._ledger.last_seen_up()

    def totals(self, since: float | None = None, *, currency: str | None = None) -> list[NameTotal]:
        self.flush()
        return self._ledger.totals(since, currency=currency)

    def per_period(self, now: float, *, currency: str | None = None) -> list[PeriodRow]:
        self.flush()
        return self._ledger.per_period(now, currency=currency)

    def daily_by_currency(
        self, now: float, days: int = 14, *, currency: str | None = None
    ) -> dict[str | None, list[tuple[date, dict[str, float]]]]:
        self.flush()
        return self._ledger.daily_by_currency(now, days, currency=currency)
