"""A stopped AutoDL box on the dashboard (issue 28): the ledger saw it up 14.5 days ago, it no
longer answers (its sshd is stopped), and the host panel says when AutoDL may release it and its
data, and what keeps it, in red within the last day."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pilothelp import _paths, make_app, state_of
from waiting import wait_for

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.services.billing import Billing
from gpu_tui.ui.screens import DetailScreen
from gpu_tui.ui.widgets.host_panel import HostPanel
from gpu_tui.ui.widgets.text_strips import TextStrips

pytestmark = pytest.mark.sshd


async def test_the_host_panel_counts_down_to_a_stopped_instances_release(sshd_factory, tmp_path: Path) -> None:
    box = sshd_factory("box", gpus=1)
    box.stop()
    seen = time.time() - 14.5 * 86400
    with Billing(_paths(tmp_path).ledger_file) as billing:
        assert billing.seen_up(InstanceConfig(name="box", host="h", hourly_rate=1.5), 3600, seen)
    app = make_app(tmp_path, [box], keys='provider = "autodl"\n')
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "box") == "offline", timeout=30)
        view = app.fleet.views["box"]
        await wait_for(pilot, lambda: view.release_at is not None, timeout=40)
        assert abs(view.release_at - (seen + 15 * 86400)) < 2
        text = app.query_one(HostPanel).render_view(view)
        line = text.plain.splitlines()[0]
        assert line.startswith("box: its provider may release it and its data from ") and "(in 11h" in line, line
        assert "without a GPU" in line
        assert any(span.style == "bold red" for span in text.spans)  # within a day: red
        row = lambda: app.dashboard.table._lines["box"].plain  # noqa: E731
        await wait_for(pilot, lambda: "offline ⌛11h" in row(), timeout=10)  # the row: the time left
        await pilot.press("enter")  # the detail screen says it too
        detail = app.screen
        assert isinstance(detail, DetailScreen)
        charts = detail.query_one("#charts", TextStrips)
        await wait_for(pilot, lambda: "may release it and its data" in charts.text.plain, timeout=10)
