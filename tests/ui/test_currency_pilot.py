"""A mixed fleet: one AutoDL box in yuan (settings.currency) and one RunPod pod in dollars (its own
`currency`, as `gpu-tui import runpod` writes it). The fleet bar, the rows, the shutdown
confirmation, the daily budget and the log screen's projected cost keep the currencies apart: never "¥2.67/h".
In-process hosts (no root); the cost screen's mixed ledger is in test_cost_screen.py."""

from __future__ import annotations

import time
from pathlib import Path

from pilothelp import inproc_app, screen_text, steady
from waiting import wait_for

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.trainlog.summary import LogSummary
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.screens.job_log import progress_text

PROFILES = (steady("autodl-4090", 50, rate=1.98), steady("runpod-a40", 50, rate=0.69))
DOLLARS = 'currency = "$"\n'  # `keys` ends the last instance's table: the RunPod pod's


def _bar(app) -> str:
    return str(app.dashboard.fleet_bar.content)


async def test_the_fleet_bar_shows_each_currency_apart(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet(*PROFILES)
    app = inproc_app(tmp_path, fleet, keys=DOLLARS)
    async with app.run_test(size=(80, 24)) as pilot:
        # online comes with the first GPU frame; what each has cost so far needs its uptime, which
        # the watch loop reports a moment later (later still on a loaded machine)
        await wait_for(pilot, lambda: "2/2 online" in _bar(app) and " + $" in _bar(app).split("so far", 1)[-1])
        bar = _bar(app)
        assert bar.startswith("¥1.98/h + $0.69/h  so far ¥"), bar
        assert " + $" in bar.split("so far", 1)[1] and "2.67" not in bar
        assert "$0.69/h" in app.dashboard.table._lines["runpod-a40"].plain
        assert "¥1.98/h" in app.dashboard.table._lines["autodl-4090"].plain
        await pilot.press("Q")  # shutting everything down names what stops billing, per currency
        await wait_for(pilot, lambda: "¥1.98/h + $0.69/h" in screen_text(app.screen))


async def test_one_currency_fleet_bar_reads_as_before(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet(*PROFILES)
    app = inproc_app(tmp_path, fleet)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "2/2 online" in _bar(app))
        assert _bar(app).startswith("¥2.67/h  so far ¥") and " + " not in _bar(app)


async def test_the_budget_counts_only_the_settings_currency(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet(*PROFILES)
    shift = [0.0]
    app = inproc_app(
        tmp_path, fleet, settings="budget_daily = 0.0001\n", keys=DOLLARS, clock=lambda: time.time() + shift[0]
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: all(v.stats is not None for v in app.fleet.views.values()))
        billing = app.dashboard._opened.billing
        # both sightings in the ledger with some time billed, before the next budget check
        await wait_for(pilot, lambda: sum(iv.seconds > 0 for iv in billing.intervals()) == 2)
        budget = lambda: [n for n in app._notifications if n.title == "budget"]  # noqa: E731
        shift[0] = 31
        await wait_for(pilot, lambda: budget())
        message = budget()[0].message
        assert "passed your daily budget of ¥0.00" in message and "(burning ¥1.98/h)" in message, message
        assert "The budget is in ¥: $" in message and "in other currencies is not counted" in message


def test_the_log_screen_projects_a_job_in_its_instance_currency() -> None:
    """The projected cost of a run on the RunPod pod is in dollars, whatever settings.currency is."""
    summary = LogSummary()
    summary.add_line(" 50%|█████     | 500/1000 [10:00<10:00,  1.20it/s]")  # 10 minutes to go
    pod = InstanceView(InstanceConfig(name="runpod-a40", host="10.0.0.2", hourly_rate=0.69, currency="$"))
    box = InstanceView(InstanceConfig(name="autodl-4090", host="10.0.0.1", hourly_rate=1.98))
    assert "$0.11 by then (+$0.11)" in progress_text(summary, pod, time.time(), "¥", True).plain
    assert "¥0.33 by then (+¥0.33)" in progress_text(summary, box, time.time(), "¥", True).plain
