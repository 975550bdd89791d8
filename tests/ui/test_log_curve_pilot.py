"""The log screen's whole-run curve on the demo (Textual Pilot; the demo answers the series
catch-up from its simulated log, services/jobs/series/read.py reads it as from an instance):
the window's curve first, then the whole run, and each key changes what is drawn."""

from __future__ import annotations

from pilothelp import on_top
from textual.widgets import OptionList, Static
from waiting import wait_for

from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.runseries import SeriesRead
from gpu_tui.ui.screens.job_log import JobLogScreen
from gpu_tui.ui.screens.pick import PickScreen

TRAIN = "autodl-4090-train"


def chart(screen: JobLogScreen) -> str:
    return str(screen.query_one("#chart", Static).render())


def note(screen: JobLogScreen) -> str:
    return str(screen.query_one("#runnote", Static).render())


def legend(screen: JobLogScreen) -> str:
    return chart(screen).split("\n")[-1]


async def open_log(pilot) -> JobLogScreen:
    app = pilot.app
    await wait_for(pilot, lambda: app.fleet is not None and app.fleet.views[TRAIN].jobs_listed, what="the jobs listed")
    await pilot.press("l")
    screen = await wait_for(pilot, lambda: on_top(app, JobLogScreen), what="the log screen")
    await wait_for(pilot, lambda: "whole run:" in note(screen), what="the whole run read")
    return screen


async def test_the_whole_run_with_eval_loss_and_each_key_changes_the_chart() -> None:
    app = build_app(demo_source(seed=0))
    async with app.run_test(size=(100, 36)) as pilot:
        screen = await open_log(pilot)
        loss = screen.curves["loss"]
        assert loss.count > 100 and "eval_loss" in screen.curves
        assert loss.points[0][0] == 0  # from the run's start, not the window's
        text = legend(screen)
        assert "━ loss" in text and "━ eval_loss" in text and "▼ min" in text

        before = chart(screen)
        await pilot.press("z")  # the demo's loss counts in epochs: the last 10 %
        assert screen.plot.zoom == 0.1 and "zoom: last 10 %" in note(screen)
        assert chart(screen) != before
        await pilot.press("z", "z")
        assert screen.plot.zoom is None and chart(screen) == before

        await pilot.press("g")
        assert screen.plot.log and "log10(loss)" in chart(screen)
        await pilot.press("g")

        assert screen.check_action("cycle_axis", ()) is False  # one x (epochs, no times): hidden
        await pilot.press("s")
        picker = await wait_for(pilot, lambda: on_top(app, PickScreen), what="the series picker")
        options = picker.query_one(OptionList)
        tags = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert tags[:2] == ["loss", "eval_loss"]
        options.highlighted = 1
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.plot.tag == "eval_loss", what="eval_loss plotted")
        assert "━ eval_loss" in legend(screen) and "━ loss" not in legend(screen)


async def test_compare_overlays_another_instances_job() -> None:
    app = build_app(demo_source(seed=0))
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await open_log(pilot)
        await pilot.press("c")
        picker = await wait_for(pilot, lambda: on_top(app, PickScreen), what="the compare picker")
        options = picker.query_one(OptionList)
        labels = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        at = next(i for i, label in enumerate(labels) if "llama-ft" in label)
        assert labels[at].startswith("autodl-4090-idle")  # another instance's job
        options.highlighted = at
        await pilot.press("enter")
        await wait_for(pilot, lambda: "llama-ft (autodl-4090-idle)" in legend(screen), what="the compared curve")
        assert screen.plot.compare == "llama-ft (autodl-4090-idle)"
        # and off again: the picker's first entry
        await pilot.press("c")
        picker = await wait_for(pilot, lambda: on_top(app, PickScreen), what="the compare picker again")
        picker.query_one(OptionList).highlighted = 0
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.plot.compare is None, what="no comparison")
        assert "llama-ft" not in legend(screen)


async def test_with_no_copy_of_the_run_the_instances_overview_is_drawn_first(monkeypatch) -> None:
    seen: list[tuple[bool, bool, list[str]]] = []
    read = JobLogScreen.on_series_read

    def spy(self: JobLogScreen, msg: SeriesRead) -> None:
        seen.append((msg.thin, msg.compare, sorted(msg.curves)))
        read(self, msg)

    monkeypatch.setattr(JobLogScreen, "on_series_read", spy)
    app = build_app(demo_source(seed=0))  # the demo keeps no copies of series
    async with app.run_test(size=(100, 36)) as pilot:
        screen = await open_log(pilot)
        assert seen[0][:2] == (True, False) and "loss" in seen[0][2]  # the overview, then every point
        assert seen[1][:2] == (False, False) and seen[1][2] == seen[0][2]
        assert screen.curves["loss"].points[0][0] == 0
