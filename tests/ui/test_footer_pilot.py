"""The dashboard's footer (ui/widgets/stable_footer.py) as the selection moves over the demo fleet:
a key dims and lights up in place, its widget kept; the footer is rebuilt only when its keys change."""

from __future__ import annotations

from textual.widgets._footer import FooterKey

from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.still import settle

FIXED_CLOCK = 1_796_000_000.0


async def test_moving_between_instances_with_and_without_a_job_restyles_the_keys_in_place() -> None:
    app = build_app(demo_source(seed=0, clock=lambda: FIXED_CLOCK), clock=lambda: FIXED_CLOCK)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        await pilot.pause()
        dash = app.dashboard
        assert dash.fleet is not None
        views = list(dash.fleet.views.values())
        with_job = {v.name for v in views if v.jobs}
        assert with_job and len(with_job) < len(views)  # the demo has both kinds
        keys = {k.action: k for k in app.screen.query(FooterKey)}
        seen = set()
        for _ in views:
            name = dash.table.selected_name
            assert name is not None
            seen.add(name in with_job)
            await pilot.pause()
            now = {k.action: k for k in app.screen.query(FooterKey)}
            assert now == keys  # the same widgets: nothing was recomposed
            assert keys["logs"].has_class("-disabled") is (name not in with_job), name
            assert keys["logs"]._disabled is (name not in with_job)  # what a click checks
            await pilot.press("j")
            await pilot.pause()
        assert seen == {True, False}


async def test_the_footer_is_rebuilt_when_its_keys_change() -> None:
    app = build_app(demo_source(seed=0, clock=lambda: FIXED_CLOCK), clock=lambda: FIXED_CLOCK)
    async with app.run_test(size=(160, 40)) as pilot:
        await settle(app)
        await pilot.pause()
        before = {k.action for k in app.screen.query(FooterKey)}
        assert "quit" in before
        app.screen._bindings.key_to_bindings.pop("q")  # a key goes away
        app.screen.refresh_bindings()
        for _ in range(20):
            await pilot.pause(0.05)
            if "quit" not in {k.action for k in app.screen.query(FooterKey)}:
                break
        assert {k.action for k in app.screen.query(FooterKey)} == before - {"quit"}
