"""Idle warnings: a billing instance whose GPUs all stay under idle_util_percent with no job
running for idle_minutes says so on its row and in a notification; a busy one does not.
In-process hosts whose GPUs read a fixed utilisation (no root)."""

from __future__ import annotations

import time
from pathlib import Path

from pilothelp import inproc_app, state_of, steady
from waiting import wait_for


async def test_idle_instance_is_called_out(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet(steady("idle", 7), steady("busy", 100))
    shift = [0.0]
    app = inproc_app(
        tmp_path, fleet, settings="idle_util_percent = 10\nidle_minutes = 15\n", clock=lambda: time.time() + shift[0]
    )
    notes = lambda: [n.message for n in app._notifications]  # noqa: E731
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(
            pilot, lambda: app.fleet.views["idle"].frame is not None and app.fleet.views["busy"].frame is not None
        )
        assert app.fleet.views["idle"].idle_seconds(app.clock()) is not None
        assert app.fleet.views["busy"].idle_seconds(app.clock()) is None
        assert "online idle" not in app.dashboard.table._lines["idle"].plain  # not for 15 minutes yet
        shift[0] = 16 * 60  # a quarter of an hour later
        await wait_for(pilot, lambda: "online idle" in app.dashboard.table._lines["idle"].plain)
        # the row can be repainted (every 0.5 s) before the idle check (every 1 s) runs, and
        # App.notify posts a message: the notification lands a moment after the row says so
        await wait_for(pilot, lambda: any(m.startswith("idle has been idle") for m in notes()))
        assert "online idle" not in app.dashboard.table._lines["busy"].plain and state_of(app, "busy") == "online"
        assert any(m.startswith("idle has been idle 16m00s") and "¥1.50/h" in m for m in notes()), notes()
        assert not any(m.startswith("busy has been idle") for m in notes())
        assert "idle 16m" in app.dashboard.host_panel.render_view(app.fleet.views["idle"], app.clock()).plain
        await pilot.pause(1.5)
        assert sum(m.startswith("idle has been idle") for m in (n.message for n in app._notifications)) == 1  # once


async def test_daily_budget_warning_once(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet()
    shift = [0.0]
    app = inproc_app(tmp_path, fleet, settings="budget_daily = 0.0001\n", clock=lambda: time.time() + shift[0])
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.fleet.views["gpu"].stats is not None)  # a sighting in the ledger
        budget = lambda: [n for n in app._notifications if n.title == "budget"]  # noqa: E731
        shift[0] = 31  # the next budget check
        await wait_for(pilot, lambda: budget())
        assert "passed your daily budget of ¥0.00" in budget()[0].message
        shift[0] = 62
        await pilot.pause(1.5)
        assert len(budget()) == 1  # once a day
