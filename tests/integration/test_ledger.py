"""The cost ledger on a real SQLite file: restarts, a writer killed with SIGKILL mid-way, several
writers at once, a locked database, verified shutdowns, a corrupt file."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from gpu_tui.services.ledger import Ledger, LedgerError

T0 = 1_750_000_000.0
NAMES = ("box-a", "box-b", "box-c")

# observes NAMES in a loop as fast as it can: instance i was booted at T0 - 3600*(i+1), is seen at
# T0 + k (k = 0, 1, 2, ...), with +-30 s of uptime jitter; prints k after each commit
WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from gpu_tui.services.ledger import Ledger
    path, start, rate = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    T0, NAMES = {t0!r}, {names!r}
    ledger = Ledger(path)
    k = start
    while True:
        now = T0 + k
        obs = [(n, now - (T0 - 3600 * (i + 1)) + ((k * 7 + i) % 61 - 30), rate, now) for i, n in enumerate(NAMES)]
        if not ledger.observe_many(obs):
            print("FAIL", flush=True)
        print(k, flush=True)
        k += 1
    """
).format(t0=T0, names=NAMES)


def start_writer(path: Path, start: int = 0, rate: float = 2.0) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), str(start), str(rate)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_until(proc: subprocess.Popen[str], n: int) -> int:
    """Read the writer's committed k until n of them; the last one."""
    assert proc.stdout is not None
    last = -1
    for _ in range(n):
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else "writer died"
        assert line.strip() != "FAIL"
        last = int(line)
    return last


def kill9(proc: subprocess.Popen[str], last_read: int = -1) -> int:
    """SIGKILL it; the last k it printed (it commits, then prints: at most one more commit)."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL
    assert proc.stdout is not None
    lines = proc.stdout.read().split("\n")[:-1]  # whole lines only
    assert "FAIL" not in lines
    return max([last_read, *(int(ln) for ln in lines)])


def assert_consistent(path: Path, last_k: int) -> None:
    """One interval per instance, from its first boot estimate to the last committed k (one more
    may have been committed but not printed), and a sound file."""
    with Ledger(path) as ledger:
        assert ledger.check() == "ok"
        ivs = ledger.intervals()
        assert sorted(iv.name for iv in ivs) == sorted(NAMES), ivs
        for i, name in enumerate(NAMES):
            (iv,) = [iv for iv in ivs if iv.name == name]
            true_boot = T0 - 3600 * (i + 1)
            assert abs(iv.start - true_boot) <= 30
            assert T0 + last_k <= iv.end <= T0 + last_k + 2, (name, iv.end - T0, last_k)
        totals = {t.name: t for t in ledger.totals()}
        for iv in ivs:
            assert abs(totals[iv.name].cost - 2.0 * (iv.end - iv.start) / 3600) < 1e-9


# ------------------------------------------------------------------------------ restarts, crashes


def test_totals_survive_restarts(tmp_path: Path) -> None:
    path = tmp_path / "data" / "ledger.sqlite3"
    with Ledger(path) as first:
        assert first.observe("box", 3600, 2.0, T0)
        assert first.observe("box", 3630, 2.0, T0 + 60)  # jitter: still the boot at T0 - 3600
    with Ledger(path) as second:  # a restart
        assert [(t.hours, round(t.cost, 6)) for t in second.totals()] == [(61 / 60, round(2 * 61 / 60, 6))]
        assert second.observe("box", 3600 + 7200, 2.0, T0 + 7200)  # same boot, seen 2 h later
        assert second.observe("box", 120, 2.0, T0 + 9000)  # rebooted
    with Ledger(path) as third:
        ivs = third.intervals()
        assert [(iv.start, iv.end) for iv in ivs] == [(T0 - 3600, T0 + 7200), (T0 + 8880, T0 + 9000)]
        (total,) = third.totals()
        assert total.seconds == 3 * 3600 + 120 and abs(total.cost - 2.0 * total.seconds / 3600) < 1e-9


def test_a_writer_killed_with_sigkill_mid_way_leaves_a_sound_ledger(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    last = -1
    for _ in range(3):  # killed three times, each time restarted where it was
        proc = start_writer(path, start=last + 1)
        seen = -1
        try:
            seen = read_until(proc, 300)
        finally:
            printed = kill9(proc, seen)
        assert printed >= last + 300
        assert Path(str(path) + "-wal").exists()  # it died with its WAL in use
        assert_consistent(path, printed)
        last = printed


def test_several_writers_and_a_reader_at_once(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    Ledger(path).intervals()  # create the schema first, as the dashboard would
    writers = [start_writer(path) for _ in range(3)]
    printed, seen = [], [-1, -1, -1]
    try:
        reader = Ledger(path)
        deadline = time.monotonic() + 2.0
        reads = 0
        while time.monotonic() < deadline:
            assert len(reader.totals()) <= len(NAMES)
            reads += 1
        seen = [read_until(w, 100) for w in writers]
    finally:
        printed = [kill9(w, k) for w, k in zip(writers, seen, strict=True)]
    assert reads > 10
    assert_consistent(path, max(printed))


# ------------------------------------------------------------------------------ locks, errors


def test_a_locked_database_is_waited_for_then_given_up_without_raising(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    Ledger(path).intervals()
    blocker = sqlite3.connect(str(path), isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        ledger = Ledger(path, busy_timeout=0.3)
        t = time.monotonic()
        assert ledger.observe("box", 100, 1.0, T0) is False
        assert 0.2 < time.monotonic() - t < 5
        assert ledger.totals() == []  # reads are not blocked by a writer (WAL)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert ledger.observe("box", 100, 1.0, T0) is True
    assert [t.name for t in ledger.totals()] == ["box"]


def test_a_corrupt_or_newer_file_is_an_error_on_read_and_false_on_write(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite3"
    bad.write_bytes(b"this is not a database" * 100)
    assert Ledger(bad).observe("box", 100, 1.0, T0) is False
    with pytest.raises(LedgerError, match="cannot read"):
        Ledger(bad).totals()
    newer = tmp_path / "newer.sqlite3"
    db = sqlite3.connect(str(newer))
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(LedgerError, match="newer gpu-tui"):
        Ledger(newer).totals()


# ------------------------------------------------------------------------------ shutdown, rates


def test_a_verified_shutdown_closes_the_interval(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.observe("box", 3600, 2.0, T0)
        assert ledger.close("box", T0 + 45, "shutdown")
        assert ledger.close("box", T0 + 999, "shutdown") is False  # already closed: nothing moves
        assert ledger.close("never-seen", T0, "shutdown") is False
        assert [(iv.start, iv.end) for iv in ledger.intervals()] == [(T0 - 3600, T0 + 45)]
        ledger.observe("box", 30, 2.0, T0 + 600)  # started again: a new boot
        assert len(ledger.intervals()) == 2
        # a shutdown verified long after the instance was last seen does not bill the gap
        assert ledger.close("box", T0 + 600 + 7200, "shutdown")
        assert ledger.intervals()[-1].end == T0 + 600


def test_a_rate_change_is_billed_from_then_on(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.observe("box", 3600, 2.0, T0)
        ledger.observe("box", 7200, 4.0, T0 + 3600)
        (total,) = ledger.totals()
        assert total.hours == 2.0 and total.cost == 2.0 + 4.0


def test_the_dashboard_throttle_holds_repeats_and_flush_writes_them(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    ledger = Ledger(path, min_write_interval=30.0)
    for k in range(10):  # once a second, as HostStatsReceived comes
        ledger.observe("box", 3600 + k, 2.0, T0 + k)
    assert Ledger(path).intervals()[0].end == T0  # only the first was written so far
    ledger.observe("box", 3600 + 40, 2.0, T0 + 40)  # 40 s on: written
    ledger.observe("box", 3600 + 41, 2.0, T0 + 41)  # held
    assert Ledger(path).intervals()[0].end == T0 + 40
    ledger.close_db()  # flushes
    assert Ledger(path).intervals()[0].end == T0 + 41
    ledger.observe("box", 5, 2.0, T0 + 42)  # a reboot is never held
    assert len(Ledger(path).intervals()) == 2


def test_observe_cost(tmp_path: Path) -> None:
    """Not a benchmark: a guard that one observation stays a short transaction."""
    ledger = Ledger(tmp_path / "l.sqlite3")
    ledger.observe("box", 3600, 2.0, T0)
    n = 300
    t = time.perf_counter()
    for k in range(n):
        ledger.observe("box", 3601 + k, 2.0, T0 + 1 + k)
    per = (time.perf_counter() - t) / n
    assert per < 0.02, f"{per * 1e6:.0f} us per observe"


# ------------------------------------------------------------------------------ currencies

SCHEMA_1 = """
CREATE TABLE intervals (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, boot REAL NOT NULL, start_at REAL NOT NULL,
    end_at REAL NOT NULL, rate REAL NOT NULL, closed_reason TEXT, CHECK (end_at >= start_at));
CREATE INDEX intervals_name_boot ON intervals (name, boot);
PRAGMA user_version = 1;
"""


def test_a_schema_1_file_gains_the_currency_column_and_keeps_its_rows(tmp_path: Path) -> None:
    """A ledger written before currencies (schema 1, as gpu-tui wrote it): it opens, its rows
    read as settings.currency's, and the dashboard's next observation extends the same row."""
    path = tmp_path / "old.sqlite3"
    db = sqlite3.connect(str(path))
    db.executescript(SCHEMA_1)
    db.execute(
        "INSERT INTO intervals (name, boot, start_at, end_at, rate, closed_reason) VALUES "
        "('old-box', ?, ?, ?, 1.98, 'shutdown'), ('box', ?, ?, ?, 2.0, NULL)",
        (T0 - 90000, T0 - 90000, T0 - 86400, T0 - 3600, T0 - 3600, T0),
    )
    db.commit()
    db.close()
    with Ledger(path) as ledger:
        ivs = ledger.intervals(currency="¥")
        assert [(iv.name, iv.rate, iv.currency) for iv in ivs] == [("old-box", 1.98, "¥"), ("box", 2.0, "¥")]
        assert ledger.observe("box", 3600 + 60, 2.0, T0 + 60)  # same boot, same (settings') currency
        assert [iv.end for iv in ledger.intervals()] == [T0 - 86400, T0 + 60]
        assert ledger.check() == "ok"
    db = sqlite3.connect(str(path))
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    assert "currency" in {row[1] for row in db.execute("PRAGMA table_info(intervals)")}
    assert db.execute("SELECT COUNT(*) FROM intervals").fetchone()[0] == 2
    db.close()
    with Ledger(path) as again:  # a second open migrates nothing twice
        assert len(again.intervals()) == 2


def test_each_interval_keeps_its_currency_and_sums_stay_apart(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.observe("autodl", 3600, 1.98, T0)
        ledger.observe("runpod", 3600, 0.69, T0, "$")
        ledger.observe("runpod", 7200, 0.69, T0 + 3600, "$")  # extends: same price, same currency
        assert [(t.name, t.currency, round(t.cost, 2)) for t in ledger.totals(currency="¥")] == [
            ("autodl", "¥", 1.98),
            ("runpod", "$", 1.38),
        ]
        assert [t.currency for t in ledger.totals()] == [None, "$"]  # unresolved without settings'
        rows = ledger.per_period(T0 + 3600, currency="¥")
        assert [(r.name, r.currency, r.hourly_rate) for r in rows] == [("autodl", "¥", 1.98), ("runpod", "$", 0.69)]
        charts = ledger.daily_by_currency(T0 + 3600, 3, currency="¥")
        assert set(charts) == {"¥", "$"}
        assert round(sum(sum(per.values()) for _d, per in charts["$"]), 2) == 1.38
        assert set().union(*(per for _d, per in charts["¥"])) == {"autodl"}


def test_a_currency_change_on_the_same_boot_is_a_new_segment(tmp_path: Path) -> None:
    """Re-imported as a dollar instance at the same number: the price changed, so the time from
    then on is billed in dollars, the time before stays in yuan."""
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.observe("box", 3600, 2.0, T0)
        ledger.observe("box", 7200, 2.0, T0 + 3600, "$")
        totals = {t.currency: (t.hours, t.cost) for t in ledger.totals(currency="¥")}
        assert totals == {"¥": (1.0, 2.0), "$": (1.0, 2.0)}


def test_the_throttle_writes_a_currency_change_at_once(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    ledger = Ledger(path, min_write_interval=30.0)
    ledger.observe("box", 3600, 2.0, T0)
    ledger.observe("box", 3601, 2.0, T0 + 1)  # held: a repeat
    ledger.observe("box", 3602, 2.0, T0 + 2, "$")  # not held: the price is new
    assert [iv.currency for iv in Ledger(path).intervals()] == [None, "$"]
    ledger.close_db()
