"""The cost ledger: billing intervals in SQLite (user data dir), surviving restarts and crashes.

Each observation "instance NAME has been up U seconds at time NOW, billing RATE per hour" puts
its boot at NOW - U and, in one short `BEGIN IMMEDIATE` transaction, extends the interval of
that boot (boot estimates within `tolerance` seconds are one boot: uptime readings jitter) to
NOW, or starts a new one (a reboot, or a new rate). A verified shutdown closes the interval.
WAL mode, `synchronous=NORMAL` (a commit survives a crash of gpu-tui; a power cut may lose the
last few seconds, which the next observation of the same boot restores) and a busy timeout,
so the dashboard and any number of `gpu-tui status` runs can write at once.

Each interval keeps the currency it bills in (the instance's own `currency`; NULL: whatever
`settings.currency` is, as every interval of a schema-1 file). The reads take the settings'
currency to fill that in; nothing here adds two currencies. Schema 1 files gain the column
on first open (an additive ALTER: their rows keep their meaning).

`observe` and `close` never raise (a failure is logged and returns False: the dashboard must
not die because the disk is full or another process holds the lock past the timeout); the
reads raise `LedgerError`. The connection opens lazily and is safe to share between threads.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import date, tzinfo
from pathlib import Path

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.money.cost import currency_of
from gpu_tui.core.money.ledgermath import (
    Extend,
    Insert,
    Interval,
    NameTotal,
    PeriodRow,
    Segment,
    daily_costs,
    daily_costs_by_currency,
    per_period,
    plan_observation,
    totals,
)

__all__ = ["Ledger", "LedgerError", "SCHEMA_VERSION", "BOOT_TOLERANCE_S", "CLOSE_GAP_S"]

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2
BOOT_TOLERANCE_S = 90.0
CLOSE_GAP_S = 900.0
"""`close` extends an interval to the shutdown time only when it was seen up this recently."""

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS intervals (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL,
    boot          REAL NOT NULL,   -- estimated boot time, epoch s (first estimate of that boot)
    start_at      REAL NOT NULL,   -- epoch s; boot, or when the rate changed
    end_at        REAL NOT NULL,   -- last seen up, or the verified shutdown
    rate          REAL NOT NULL,   -- per hour, in `currency`
    closed_reason TEXT,            -- e.g. 'shutdown', NULL while it may still be billing
    currency      TEXT,            -- the instance's own; NULL: settings.currency (schema 2)
    CHECK (end_at >= start_at)
)""",
    "CREATE INDEX IF NOT EXISTS intervals_name_boot ON intervals (name, boot)",
)
_MIGRATE_1 = "ALTER TABLE intervals ADD COLUMN currency TEXT"

Observation = tuple[str, float, float, float] | tuple[str, float, float, float, str | None]
"""`(name, uptime_seconds, rate, now)`, optionally with the instance's own currency."""


class LedgerError(GpuTuiError):
    """The ledger file cannot be read (corrupt, from a newer gpu-tui, unreadable)."""

    title = N_("ledger")


class Ledger:
    """One ledger file. `min_write_interval` > 0 (the dashboard) writes a repeated observation
    of the same boot and rate at most that often per instance; `flush()` writes what was held."""

    def __init__(
        self,
        path: Path,
        *,
        tolerance: float = BOOT_TOLERANCE_S,
        busy_timeout: float = 5.0,
        min_write_interval: float = 0.0,
        tz: tzinfo | None = None,
    ) -> None:
        self.path = Path(path)
        self.tolerance = tolerance
        self.busy_timeout = busy_timeout
        self.min_write_interval = min_write_interval
        self.tz = tz
        self._db: sqlite3.Connection | None = None
        self._lock = threading.RLock()
        # name -> (boot, rate, seen, currency)
        self._written: dict[str, tuple[float, float, float, str | None]] = {}
        # name -> (uptime, rate, now, currency)
        self._held: dict[str, tuple[float, float, float, str | None]] = {}

    # ------------------------------------------------------------------ connection

    def _conn(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            db = sqlite3.connect(
                str(self.path), timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
            try:
                db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    raise LedgerError(
                        _("{path} was written by a newer gpu-tui (schema {version})").format(
                            path=self.path, version=version
                        )
                    )
                if version < SCHEMA_VERSION:
                    with _transaction(db):
                        for stmt in _SCHEMA:
                            db.execute(stmt)
                        columns = {row[1] for row in db.execute("PRAGMA table_info(intervals)")}
                        if "currency" not in columns:  # a schema 1 file: add, keep every row
                            db.execute(_MIGRATE_1)
                        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def close_db(self) -> None:
        """Write held observations and close the file (reopened on next use)."""
        with self._lock:
            self.flush()
            if self._db is not None:
                self._db.close()
                self._db = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close_db()

    # ------------------------------------------------------------------ writes

    def observe(self, name: str, uptime_seconds: float, rate: float, now: float, currency: str | None = None) -> bool:
        """Record that `name` has been up `uptime_seconds` at `now`, billing `rate` per hour in
        `currency` (the instance's own; None: settings.currency). False when it could not be
        written (logged)."""
        return self.observe_many([(name, uptime_seconds, rate, now, currency)])

    def observe_many(self, observations: Iterable[Observation]) -> bool:
        """Several `(name, uptime_seconds, rate, now[, currency])` observations in one transaction."""
        todo = []
        with self._lock:
            for name, uptime, rate, now, *rest in observations:
                currency = rest[0] if rest else None
                if uptime is None or uptime < 0:
                    continue
                if self._hold(name, float(uptime), float(rate), float(now), currency):
                    continue
                todo.append((name, float(uptime), float(rate), float(now), currency))
            return self._write(todo)

    def flush(self) -> bool:
        """Write the observations `min_write_interval` held back."""
        with self._lock:
            held, self._held = self._held, {}
            return self._write([(n, *obs) for n, obs in held.items()])

    def _hold(self, name: str, uptime: float, rate: float, now: float, currency: str | None) -> bool:
        if self.min_write_interval <= 0:
            return False
        last = self._written.get(name)
        if (
            last is not None
            and abs(last[0] - (now - uptime)) <= self.tolerance
            and last[1] == rate
            and last[3] == currency
            and 0 <= now - last[2] < self.min_write_interval
        ):
            self._held[name] = (uptime, rate, now, currency)
            return True
        return False

    def _write(self, todo: list[tuple[str, float, float, float, str | None]]) -> bool:
        if not todo:
            return True
        try:
            db = self._conn()
            with _transaction(db):
                for name, uptime, rate, now, currency in todo:
                    self._apply(db, name, now - uptime, now, rate, currency)
        except (sqlite3.Error, OSError, LedgerError) as exc:
            log.warning("ledger %s: could not record %d observation(s): %s", self.path, len(todo), exc)
            return False
        for name, uptime, rate, now, currency in todo:
            self._written[name] = (now - uptime, rate, now, currency)
            self._held.pop(name, None)
        return True

    def _apply(
        self, db: sqlite3.Connection, name: str, boot: float, seen: float, rate: float, currency: str | None
    ) -> None:
        tol = self.tolerance
        same = [
            Segment(*row)
            for row in db.execute(
                "SELECT id, boot, start_at, end_at, rate, currency FROM intervals "
                "WHERE name = ? AND boot BETWEEN ? AND ?",
                (name, boot - tol, boot + tol),
            )
        ]
        prev_end = db.execute(
            "SELECT MAX(end_at) FROM intervals WHERE name = ? AND boot < ?", (name, boot - tol)
        ).fetchone()[0]
        next_start = db.execute(
            "SELECT MIN(start_at) FROM intervals WHERE name = ? AND boot > ?", (name, boot + tol)
        ).fetchone()[0]
        plan = plan_observation(same, boot, seen, rate, currency=currency, prev_end=prev_end, next_start=next_start)
        if isinstance(plan, Extend):
            db.execute("UPDATE intervals SET end_at = ?, closed_reason = NULL WHERE id = ?", (plan.end, plan.id))
        elif isinstance(plan, Insert):
            db.execute(
                "INSERT INTO intervals (name, boot, start_at, end_at, rate, currency) VALUES (?, ?, ?, ?, ?, ?)",
                (name, plan.boot, plan.start, plan.end, plan.rate, plan.currency),
            )

    def close(self, name: str, at: float, reason: str = "shutdown") -> bool:
        """A verified shutdown of `name` at `at`: its latest interval ends there (if it was seen up
        within CLOSE_GAP_S of `at`; else it keeps its last-seen end) and is marked closed.
        False when there was nothing open to close or it could not be written."""
        with self._lock:
            self.flush()
            try:
                db = self._conn()
                with _transaction(db):
                    row = db.execute(
                        "SELECT id, end_at, closed_reason FROM intervals WHERE name = ? "
                        "ORDER BY end_at DESC, id DESC LIMIT 1",
                        (name,),
                    ).fetchone()
                    if row is None or row[2] is not None:
                        return False
                    end = at if 0 <= at - row[1] <= CLOSE_GAP_S else row[1]
                    db.execute("UPDATE intervals SET end_at = ?, closed_reason = ? WHERE id = ?", (end, reason, row[0]))
            except (sqlite3.Error, OSError, LedgerError) as exc:
                log.warning("ledger %s: could not close %s: %s", self.path, name, exc)
                return False
            self._written.pop(name, None)
            return True

    # ------------------------------------------------------------------ reads

    def intervals(self, since: float | None = None, *, currency: str | None = None) -> list[Interval]:
        """Every interval (ending after `since`), oldest first; one recorded without a currency
        is in `currency` (pass settings.currency; None leaves it None)."""
        with self._lock:
            try:
                db = self._conn()
                rows = db.execute(
                    "SELECT name, start_at, end_at, rate, currency FROM intervals WHERE end_at > ? "
                    "ORDER BY start_at, id",
                    (float("-inf") if since is None else since,),
                ).fetchall()
            except (sqlite3.Error, OSError) as exc:
                raise LedgerError(_("cannot read {path}: {error}").format(path=self.path, error=exc)) from exc
        return [Interval(name, start, end, rate, currency_of(own, currency)) for name, start, end, rate, own in rows]

    def last_seen_up(self) -> dict[str, float]:
        """Per instance name, the last time it was seen up (or its verified shutdown): the start of
        a stopped instance's count to its release (core/power.py)."""
        with self._lock:
            try:
                rows = self._conn().execute("SELECT name, MAX(end_at) FROM intervals GROUP BY name").fetchall()
            except (sqlite3.Error, OSError) as exc:
                raise LedgerError(_("cannot read {path}: {error}").format(path=self.path, error=exc)) from exc
        return {name: float(end) for name, end in rows}

    def totals(self, since: float | None = None, *, currency: str | None = None) -> list[NameTotal]:
        """Seconds and cost per instance name and currency (by name); only time after `since`
        counts. `currency`: settings.currency, for what was recorded without one."""
        return totals(self.intervals(since, currency=currency), since)

    def per_period(self, now: float, *, currency: str | None = None) -> list[PeriodRow]:
        """Cost per instance (and currency) today / this week / this month / all time, local calendar."""
        return per_period(self.intervals(currency=currency), now, self.tz)

    def daily(self, now: float, days: int = 14) -> list[tuple[date, dict[str, float]]]:
        """The last `days` local days, oldest first, each with its cost per instance (one
        currency's fleet; `daily_by_currency` keeps currencies apart)."""
        return daily_costs(self.intervals(), now, days, self.tz)

    def daily_by_currency(
        self, now: float, days: int = 14, *, currency: str | None = None
    ) -> dict[str | None, list[tuple[date, dict[str, float]]]]:
        """`daily` for each currency the ledger holds, apart (none when it holds nothing)."""
        return daily_costs_by_currency(self.intervals(currency=currency), now, days, self.tz)

    def check(self) -> str:
        """SQLite's own integrity check ('ok' when sound)."""
        with self._lock:
            try:
                return str(self._conn().execute("PRAGMA integrity_check").fetchone()[0])
            except (sqlite3.Error, OSError) as exc:
                raise LedgerError(_("cannot read {path}: {error}").format(path=self.path, error=exc)) from exc


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
