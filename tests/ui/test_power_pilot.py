"""S, Q and the q guard, driven with Pilot against real sshd whose fake `shutdown` takes the
instance down (its sessions end, its sshd stops); the guard's choices that power nothing off on
in-process hosts (no root)."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from pilothelp import inproc_app, make_app, on_top, screen_text, state_of
from rich.console import Console
from sshhelp import env_for_children
from textual.widgets import Static
from waiting import wait_for

from gpu_tui.ui.screens.power import QuitGuardScreen, ShutdownConfirmScreen, ShutdownReportScreen


async def test_S_shuts_the_selected_instance_down_verified(sshd_factory, tmp_path: Path) -> None:
    a, b = sshd_factory("a"), sshd_factory("b")
    app = make_app(tmp_path, [a, b])
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "a") == "online" and state_of(app, "b") == "online")
        await pilot.press("S")
        assert isinstance(app.screen, ShutdownConfirmScreen)
        assert "Shut down a" in screen_text(app.screen) and "¥1.50/h" in screen_text(app.screen)
        await pilot.press("n")
        assert not a.powered_off
        await pilot.press("S")
        await pilot.press("y")
        await wait_for(pilot, lambda: on_top(app, ShutdownReportScreen))
        assert "all 1 shut down and verified" in screen_text(app.screen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: state_of(app, "a") == "stopped")
        assert a.powered_off and not b.powered_off
        assert app.dashboard.check_action("shutdown", ()) is None  # a stopped instance does not bill
        await pilot.pause(1.0)
        assert state_of(app, "a") == "stopped"  # no reconnecting over it
        assert app.fleet.burn_rate() == pytest.approx(1.5)


def shutdowns(commands: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(name, c) for name, c in commands if "shutdown" in c or "poweroff" in c]


async def test_q_guard_then_quit_anyway(inproc_fleet, inproc_commands, tmp_path: Path) -> None:
    fleet = await inproc_fleet()
    app = inproc_app(tmp_path, fleet)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "gpu") == "online")
        await pilot.press("q")
        guard = app.screen
        assert isinstance(guard, QuitGuardScreen)
        text = screen_text(guard)
        assert "still billing: " in text and "gpu" in text and "¥1.50/h" in text
        await pilot.press("escape")
        assert not isinstance(app.screen, QuitGuardScreen) and app.is_running
        await pilot.press("q")
        await pilot.press("y")
    assert inproc_commands and shutdowns(inproc_commands) == []


async def test_Q_from_the_guard_reports_each_and_quits(sshd_factory, tmp_path: Path) -> None:
    good, bad = sshd_factory("good"), sshd_factory("bad")
    app = make_app(tmp_path, [good, bad], keys='shutdown_command = "echo refused >&2; exit 1"\n')
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "good") == "online" and state_of(app, "bad") == "online")
        await pilot.press("q")
        assert isinstance(app.screen, QuitGuardScreen)
        await pilot.press("Q")
        await wait_for(pilot, lambda: on_top(app, ShutdownReportScreen))
        text = screen_text(app.screen)
        assert "1 NOT shut down" in text and "the shutdown command failed (exit 1): refused" in text
        assert "stopped (verified" in text
        await pilot.press("enter")
    assert good.powered_off and not bad.powered_off and bad.is_running


async def test_ledger_records_the_dashboard_and_closes_at_shutdown(sshd_instance, tmp_path: Path) -> None:
    from gpu_tui.services.ledger import Ledger
    from gpu_tui.ui.screens.cost import CostScreen

    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(80, 24)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: app.fleet.views[name].stats is not None)
        app.opened.billing.flush()
        with Ledger(tmp_path / "data" / "ledger.sqlite3") as reader:
            assert [i.name for i in reader.intervals()] == [name]
        await pilot.press("dollar_sign")
        assert isinstance(app.screen, CostScreen)
        await pilot.pause()
        console = Console(width=80, record=True, color_system=None, file=io.StringIO())
        console.print(app.screen.query_one("#cost-table", Static).content)
        rows = [line.split() for line in console.export_text().splitlines()]
        assert any(r and r[0] == name and r[1] == "¥1.50/h" for r in rows), rows
        await pilot.press("escape")
        await pilot.press("S")
        await pilot.press("y")
        await wait_for(pilot, lambda: on_top(app, ShutdownReportScreen))
        await pilot.press("enter")
    with Ledger(tmp_path / "data" / "ledger.sqlite3") as reader:
        (interval,) = reader.intervals()
        assert interval.name == name and interval.end <= time.time() and interval.end > time.time() - 30


async def test_S_can_pull_the_results_first(sshd_instance, tmp_path: Path, monkeypatch) -> None:
    out = sshd_instance.home() / "proj" / "out"
    out.mkdir(parents=True)
    (out / "best.pt").write_text("weights\n")
    local = tmp_path / "results"
    env_for_children(monkeypatch, tmp_path, sshd_instance)  # rsync's transport child
    extra = f'sync = {{ local = "{local}", remote = "proj/out" }}\n'
    app = make_app(tmp_path, [sshd_instance], keys=extra, write_config=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: state_of(app, sshd_instance.name) == "online")
        await pilot.press("S")
        assert isinstance(app.screen, ShutdownConfirmScreen)
        assert f"p pulls proj/out into {local} first" in screen_text(app.screen)
        await pilot.press("p")
        await wait_for(pilot, lambda: on_top(app, ShutdownReportScreen), timeout=30)
        assert "all 1 shut down and verified" in screen_text(app.screen)
    assert (local / "best.pt").read_text() == "weights\n"
    assert sshd_instance.powered_off


async def test_the_q_guard_offers_pulling_first_when_sync_is_set(inproc_fleet, inproc_commands, tmp_path: Path) -> None:
    fleet = await inproc_fleet()
    results = tmp_path / "r"
    extra = f'sync = {{ local = "{results}" }}\n'
    app = inproc_app(tmp_path, fleet, keys=extra)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "gpu") == "online")
        await pilot.press("q")
        guard = app.screen
        assert isinstance(guard, QuitGuardScreen)
        assert [b.id for b in guard.query("Button")] == ["pull_all", "shutdown_all", "quit", "stay"]
        await pilot.press("escape")
    assert inproc_commands and shutdowns(inproc_commands) == []
