"""The app hands its full collections to GcPacing once start-up has settled, and gives them back
when it closes (tests build many apps in one process)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from pilothelp import inproc_app
from waiting import wait_for

from gpu_tui.ui import app as app_module


async def test_the_app_paces_full_collections_while_it_runs(
    inproc_fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "FREEZE_AFTER_SECONDS", 0.1)
    monkeypatch.setattr(app_module, "FULL_COLLECTION_SECONDS", 0.2)
    collected: list[int] = []
    before = gc.get_threshold()
    fleet = await inproc_fleet()
    app = inproc_app(tmp_path, fleet)
    real_collect = app.gc_pacing.collect
    monkeypatch.setattr(app.gc_pacing, "collect", lambda: collected.append(real_collect()) or 0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.gc_pacing.started)
        assert gc.get_threshold()[2] > before[2]
        await wait_for(pilot, lambda: len(collected) >= 2)  # the timer's, again and again
    assert gc.get_threshold() == before and not app.gc_pacing.started


async def test_a_key_holds_the_collector_off_until_its_paint_is_out(
    inproc_fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(app_module, "FREEZE_AFTER_SECONDS", 0.1)
    monkeypatch.setattr(app_module, "KEY_HOLD_SECONDS", 1.0)
    fleet = await inproc_fleet()
    app = inproc_app(tmp_path, fleet)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("j")  # before pacing: start-up's collections are CPython's own
        assert gc.isenabled()
        await wait_for(pilot, lambda: app.gc_pacing.started)
        await pilot.press("j")
        assert not gc.isenabled()
        await wait_for(pilot, gc.isenabled)  # the timer gives it back
    assert gc.isenabled()
