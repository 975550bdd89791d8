"""`v`, the VRAM fit screen, on the demo fleet (in-process SSH servers on loopback, no root):
it opens from the dashboard, checks the model against the GPUs the fleet reports, follows what is
typed, says why a half-typed model is refused, and gives the dashboard back."""

from __future__ import annotations

import io

from rich.console import Console
from textual.widgets import Input, Select, Static
from waiting import wait_for

from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.screens.fit import FitScreen

CLOCK = 1_796_000_000.0


def shown(app, wid: str) -> str:
    console = Console(width=app.size.width, record=True, color_system=None, file=io.StringIO())
    console.print(app.screen.query_one(f"#{wid}", Static).content)
    return console.export_text()


async def test_fit_screen_follows_the_inputs_and_the_fleet() -> None:
    app = build_app(demo_source(seed=0, clock=lambda: CLOCK), clock=lambda: CLOCK)
    async with app.run_test(size=(80, 24)) as pilot:
        dash = app.dashboard
        # every demo instance that streams GPUs has reported once (the broken one never does)
        await wait_for(
            pilot, lambda: sum(v.frame is not None for v in dash.fleet.views.values()) >= 5, what="the demo's GPUs"
        )
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, FitScreen), what="the fit screen")
        await wait_for(pilot, lambda: "7.62B parameters" in shown(app, "fit-result"), what="qwen2.5-7b's estimate")
        text = shown(app, "fit-result")
        # 17.2 GiB in bf16 at 4096 tokens: the 4090s hold it, the fleet's GPUs are listed by name
        assert "17.2 GiB" in text and "RTX 4090" in text and "8x H100" in text
        # the verdict wraps beside the breakdown; the lab box has no hourly rate set, so it is not
        # "the cheapest": the 3090 at ¥1.58/h is
        assert "cheapest fitting card in your fleet:" in text and "autodl-flaky (¥1.58/h)" in text

        model = app.screen.query_one("#model", Input)
        model.value = "llama-3.1-70b"
        await wait_for(pilot, lambda: "70.55B parameters" in shown(app, "fit-result"), what="the 70B estimate")
        rows = {line.split()[0]: line for line in shown(app, "fit-result").splitlines() if line.strip()}
        assert " no " in rows["autodl-4090-train"] and " yes " not in rows["autodl-4090-train"]
        # the broken instance never reported its GPUs: "so far"
        assert "no card seen so far holds it on one GPU" in shown(app, "fit-result")

        app.screen.query_one("#dtype", Select).value = "int4"  # 32.9 + 6.6 + 1.25 GiB: an 80 GB card
        await wait_for(
            pilot,
            lambda: (
                " yes "
                in [
                    ln
                    for ln in shown(app, "fit-result").splitlines()
                    if ln.startswith(" runpod-h100x8") or ln.startswith("runpod")
                ][0]
            ),
            what="int4 fitting the H100",
        )

        model.value = "llama-3.1-70"  # half typed: said, the last estimate stays
        error = app.screen.query_one("#fit-error", Static)
        await wait_for(
            pilot, lambda: error.display and "unknown model 'llama-3.1-70'" in str(error.content), what="the refusal"
        )
        assert "70.55B parameters" in shown(app, "fit-result")

        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is dash, what="the dashboard back")
