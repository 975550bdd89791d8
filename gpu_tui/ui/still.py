"""Freeze a running dashboard into a repeatable picture, for snapshot tests and screenshots/.

With the demo on a fixed clock every value is constant; what still varies is how many samples
arrived, so this stops the monitors and fills each history with the latest sample.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from textual.app import App
from textual.widgets import Input

from gpu_tui.ui.dashboard import DashboardScreen

__all__ = ["settle"]


async def settle(app: App[Any], *, timeout: float = 20.0) -> None:
    """Wait until every instance has left `connecting` (online ones: a frame, or a gpu error, and a
    CPU %, which takes two stats samples, and a job listing), then freeze."""
    dash = next(s for s in app.screen_stack if isinstance(s, DashboardScreen))
    end = time.monotonic() + timeout
    while True:
        fleet = dash.fleet
        if fleet is not None and all(
            v.shown_state not in ("connecting",)
            and (v.state != "online" or v.stats is not None and v.stats.cpu_percent is not None)
            and (v.state != "online" or v.gpu_error is not None or v.frame is not None)
            and (v.state != "online" or v.jobs_listed)
            for v in fleet.views.values()
        ):
            break
        if time.monotonic() > end:
            raise TimeoutError("the dashboard did not settle")
        await asyncio.sleep(0.05)
    app.workers.cancel_all()
    for screen in app.screen_stack:  # a blinking cursor is drawn or not by the clock
        for field in screen.query(Input):
            field.cursor_blink = False
    await asyncio.sleep(0.1)
    for v in fleet.views.values():
        if v.frame is not None:
            for _ in range(v.history.maxlen):
                v.history.append(v.frame)
    now = dash.clock()
    for v in fleet.views.values():
        dash.table.show(v, now)
    dash.fleet_bar.refresh_from(fleet, now)
    dash.refresh_panels()
