"""The dashboard's sort (`o`), show-only (`w`) and name filter (`/`) keys on in-process instances
(issue 26): rows reorder and hide, the cursor stays on its instance while it is shown, the summary
line says how the list is arranged and how many rows that leaves, and a filter that leaves no row
leaves the instance keys with nothing to act on (never a crash)."""

from __future__ import annotations

from pathlib import Path

from pilothelp import inproc_app, on_top, state_of, steady
from waiting import wait_for

from gpu_tui.ui.screens.find import FindScreen


def summary(app) -> str:
    last = app.dashboard.summary._last
    return "" if last is None else last.plain


async def test_sort_show_only_and_find(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet(
        steady("w-mid", 50, gpus=2), steady("a-idle", 0), steady("z-busy", 95, gpus=4), steady("m-idle2", 2, gpus=2)
    )
    app = inproc_app(tmp_path, fleet, settings="idle_util_percent = 10\n")
    async with app.run_test(size=(80, 24)) as pilot:
        dash, table = app.dashboard, app.dashboard.table
        await wait_for(pilot, lambda: all(state_of(app, n) == "online" for n in fleet.names))
        await wait_for(pilot, lambda: "GPUs 6 busy 3 idle" in summary(app), timeout=10)
        assert "o sort  w show  / find" in summary(app)
        assert list(table.rows) == ["w-mid", "a-idle", "z-busy", "m-idle2"]
        await pilot.press("j")  # a-idle selected: it stays selected as the rows move
        await pilot.press("o")
        assert list(table.rows) == ["a-idle", "m-idle2", "w-mid", "z-busy"] and table.selected_name == "a-idle"
        assert "4/4 rows  sorted by name" in summary(app)
        await pilot.press("o")
        assert list(table.rows) == ["z-busy", "w-mid", "m-idle2", "a-idle"] and table.selected_name == "a-idle"
        assert table.cursor_row == 3 and dash.selected() is app.fleet.views["a-idle"]
        await pilot.press("w")  # only with idle GPUs
        assert list(table.rows) == ["m-idle2", "a-idle"] and "2/4 rows" in summary(app)
        assert "only with idle GPUs" in summary(app)
        # the name filter: escape keeps the one in force, enter sets it
        await pilot.press("slash")
        await wait_for(pilot, lambda: on_top(app, FindScreen))
        await pilot.press("x", "escape")
        assert list(table.rows) == ["m-idle2", "a-idle"]
        await pilot.press("slash")
        await wait_for(pilot, lambda: on_top(app, FindScreen))
        await pilot.press(*"IDLE2", "enter")
        assert list(table.rows) == ["m-idle2"] and table.selected_name == "m-idle2"  # a-idle is out of sight
        assert "name has IDLE2" in summary(app)
        await pilot.press("slash")
        await wait_for(pilot, lambda: on_top(app, FindScreen))
        await pilot.press(*"nothing", "enter")
        assert table.row_count == 0 and dash.selected() is None and "0/4 rows" in summary(app)
        await pilot.press("enter", "l", "x", "j")  # nothing selected: nothing opens, nothing breaks
        assert app.screen is dash
        # empty text: every name again; two more `w` and three more `o`: the list as it was
        await pilot.press("slash")
        await wait_for(pilot, lambda: on_top(app, FindScreen))
        await pilot.press("ctrl+u", "enter")
        await pilot.press("w", "w", "o", "o", "o")
        assert list(table.rows) == ["w-mid", "a-idle", "z-busy", "m-idle2"]
        assert "rows" not in summary(app) and "o sort" in summary(app)


async def test_remapped_keys_are_the_ones_the_summary_names(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet(steady("b", 50), steady("a", 0))
    app = inproc_app(tmp_path, fleet, keys='\n[keys]\nsort = "f5"\nfind = "f6"\n')
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "f5 sort  w show  f6 find" in summary(app), timeout=20)
        await pilot.press("f5")
        assert list(app.dashboard.table.rows) == ["a", "b"]
        await pilot.press("o")  # the default key no longer sorts
        assert list(app.dashboard.table.rows) == ["a", "b"]
