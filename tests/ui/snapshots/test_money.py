"""Money: the cost screen (`$`), the shutdown confirmation (`S`), the shutdown report and the quit
guard (`q` while instances still bill).

The demo offers none of them (no config, no ledger). The confirmation and the guard come from
the demo fleet opened as a config file's instances would be (its config and ledger in a temp dir
that neither screen prints), so their text is the dashboard's own; the cost screen reads a
ledger filled with fixed intervals, the report shows fixed results.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gpu_tui.services.billing import Billing
from gpu_tui.services.ledger import Ledger
from gpu_tui.services.power import ShutdownResult
from gpu_tui.ui.screens.cost import CostScreen
from gpu_tui.ui.screens.power import ShutdownReportScreen

from .shots import SIZES, HostApp, configured_demo_app, settled

COST_NOW = datetime(2026, 11, 26, 15, 0, tzinfo=UTC).timestamp()
"""A Thursday afternoon (UTC, as every snapshot runs): today, the week and the month differ."""
HOUR, DAY = 3600.0, 86400.0


def _ledger(tmp_path: Path) -> Billing:
    """Three weeks of a small fleet: a 4090 every day, an H100 box for two days last week, one
    instance since removed from the config."""
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    seen = []
    for day in range(20):  # one stint a day, from 09:00, longer on some days
        end = COST_NOW - day * DAY - (0 if day == 0 else 4 * HOUR)
        seen.append(("autodl-4090-train", (3 + day % 4) * HOUR, 1.98, end))
    seen.append(("runpod-h100x8", 26 * HOUR, 52.0, COST_NOW - 6 * DAY))
    seen.append(("vast-3090-broken", 5 * HOUR, 1.45, COST_NOW - 2 * DAY))
    seen.append(("lab-old-a6000", 30 * HOUR, 3.2, COST_NOW - 12 * DAY))
    ledger.observe_many(sorted(seen, key=lambda o: o[3]))  # in the order they were seen
    ledger.close_db()
    return Billing(ledger.path)


@SIZES
def test_cost(snap_compare, size, tmp_path) -> None:
    """`$`: per instance today / week / month / all time, and the last 14 days as bars."""
    billing = _ledger(tmp_path)
    try:
        app = HostApp(lambda: CostScreen(billing, "¥", lambda: COST_NOW))
        assert snap_compare(app, terminal_size=size)
    finally:
        billing.close()


@SIZES
def test_shutdown_confirm(snap_compare, size) -> None:
    """`S` on the training box: its rate, the job that stops with it, and `p` to pull its sync
    directory first."""
    assert snap_compare(configured_demo_app(), terminal_size=size, press=["S"], run_before=settled)


@SIZES
def test_shutdown_all_confirm(snap_compare, size) -> None:
    """`Q`: every billing instance at once, then quit."""
    assert snap_compare(configured_demo_app(), terminal_size=size, press=["Q"], run_before=settled)


REPORT = [
    ShutdownResult("autodl-4090-train", True, "stopped (verified in 3.4 s)", 3.4),
    ShutdownResult("runpod-h100x8", True, "stopped (verified in 2.9 s)", 2.9),
    ShutdownResult(
        "lab-a100-mig",
        False,
        "NOT shut down: the shutdown command failed (exit 1): sudo: a password is required",
        0.8,
    ),
    ShutdownResult(
        "autodl-flaky",
        False,
        "not shut down: cannot reach it to shut it down or verify (Unreachable: connect.westb.seetacloud.com:23456: "
        "connection refused (is the instance running? is the port right?))",
        0.2,
    ),
]


@SIZES
def test_shutdown_report(snap_compare, size) -> None:
    """After `S` / `Q`: which instances are verified down, and why the others are not."""
    assert snap_compare(HostApp(lambda: ShutdownReportScreen(REPORT)), terminal_size=size)


@SIZES
def test_quit_guard(snap_compare, size) -> None:
    """`q` while instances bill: shut them all down (pulling the results first), quit anyway, or stay."""
    assert snap_compare(configured_demo_app(), terminal_size=size, press=["q"], run_before=settled)
