"""A lab's nodes in the dashboard (issue 26), read from Debian's real prometheus scraping loopback
stand-ins for dcgm-exporter and node_exporter: a config with only a Prometheus opens the
dashboard on its nodes (not the welcome screen), each node a row with its GPUs and its rate per
GPU-hour, node_exporter's load and memory in the host panel, an Xid as the fault it is, an
exporter that goes down its node offline with the reason, and only the keys that mean something
on a node gpu-tui does not log in to. A Prometheus that cannot be read is one row saying why."""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from pilothelp import make_app
from promhelp import DcgmExporter, NodeExporter, Prometheus, free_port, require_prometheus
from waiting import until_sync, wait_for

from gpu_tui.ui.screens import DetailScreen, WelcomeScreen
from gpu_tui.ui.widgets.host_panel import HostPanel
from gpu_tui.ui.widgets.text_strips import TextStrips


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[Prometheus, dict[str, DcgmExporter]]]:
    require_prometheus()
    exporters = {"node-a": DcgmExporter("node-a", 8), "node-b": DcgmExporter("node-b", 2)}
    node_a = NodeExporter("node-a", cpus=4)
    prom = Prometheus(tmp_path / "prom", [e.target for e in exporters.values()], node_targets=[node_a.target])
    try:
        prom.wait_ready()
        until_sync(
            lambda: len(prom.query("DCGM_FI_DEV_GPU_UTIL")) == 10 and len(prom.query("node_load1")) == 1,
            30,
            what="prometheus to scrape the exporters",
            step=0.2,
        )
        yield prom, exporters
    finally:
        prom.stop()
        node_a.stop()
        for e in exporters.values():
            e.stop()


def lab_config(url: str) -> str:
    return f'\n[prometheus.lab]\nurl = "{url}"\nrefresh_seconds = 1\nhourly_rate = 1.5\ncurrency = "$"\n'


def state_of(app, name: str) -> str:
    """The row's state word, "" before the row is there (a lab's rows come with its first read)."""
    view = app.fleet.views.get(name) if app.fleet is not None else None
    return "" if view is None else view.shown_state


def host_text(app) -> str:
    return app.query_one(HostPanel).render_view(app.dashboard.selected()).plain


async def test_a_labs_nodes_are_rows(lab, tmp_path: Path) -> None:
    prom, exporters = lab
    app = make_app(tmp_path, [], keys=lab_config(prom.url))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "node-a") == "online" and state_of(app, "node-b") == "online")
        assert not isinstance(app.screen, WelcomeScreen)
        table = app.dashboard.table
        # the rows are painted on the dashboard's next paint, after the read that brought them
        await wait_for(pilot, lambda: list(table.rows) == ["node-a", "node-b"], timeout=10)
        row = table.text_of("node-a").plain
        assert "node-a" in row and " 8 " in row and "$12.00/h" in row, row  # $1.5 a GPU-hour x 8
        assert app.fleet.views["node-a"].source == "prometheus:lab"
        # nothing on a node's row moves with the clock (no cost so far): the tick leaves it be
        assert "node-a" not in table.clocked and "node-b" not in table.clocked
        # node_exporter's figures, joined by its nodename; a quarter of 4 CPUs busy
        await wait_for(pilot, lambda: "load 2.5" in host_text(app) and "RAM 16.0/64.0G" in host_text(app))
        assert "from Prometheus lab" in host_text(app)
        # a node gpu-tui does not log in to: no shell, jobs, power; detail and reconnect stay
        dash = app.dashboard
        assert [dash.check_action(a, ()) for a in ("shell", "run_job", "shutdown", "sync", "check")] == [None] * 5
        assert dash.check_action("detail", ()) is True and dash.power.billing() == []
        # an Xid, then an exporter down: the fault in words; the node offline with the reason
        exporters["node-a"].values[5]["DCGM_FI_DEV_XID_ERRORS"] = 79.0
        await wait_for(pilot, lambda: "GPU 5: Xid 79: the GPU has fallen off the bus" in host_text(app), timeout=30)
        # on Kubernetes, dcgm-exporter names the pod each GPU is allotted to
        exporters["node-a"].pods[6] = ("team-a", "train-7f9c")
        await wait_for(pilot, lambda: "pods\n  gpu 6  team-a/train-7f9c" in host_text(app), timeout=30)
        exporters["node-b"].stop()
        await wait_for(pilot, lambda: state_of(app, "node-b") == "offline", timeout=30)
        assert app.fleet.views["node-b"].message == "its exporter is down (Prometheus up == 0)"
        assert list(table.rows) == ["node-a", "node-b"]  # listed under the name it had


def range_queries(prom: Prometheus) -> int:
    """query_range requests Prometheus has answered, by its own /metrics."""
    with urllib.request.urlopen(prom.url + "/metrics", timeout=10) as answer:
        text = answer.read().decode()
    return sum(
        round(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith("prometheus_http_requests_total{") and 'handler="/api/v1/query_range"' in line
    )


def charts_text(app) -> str:
    screen = app.screen
    return screen.query_one("#charts", TextStrips).text.plain if isinstance(screen, DetailScreen) else ""


async def test_a_nodes_detail_charts_its_last_hour_from_prometheus(lab, tmp_path: Path) -> None:
    prom, _exporters = lab
    app = make_app(tmp_path, [], keys=lab_config(prom.url))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: list(app.dashboard.table.rows) == ["node-a", "node-b"], timeout=30)
        await pilot.press("enter")  # node-a
        await wait_for(
            pilot, lambda: re.search(r"the last hour from Prometheus lab, a point every \d+ s", charts_text(app))
        )
        assert range_queries(prom) == 2  # for the node on screen only, whatever the lab's size
        text = charts_text(app)
        assert "minutes ago" in text and "gpu 7 70%" in text and "GPU utilisation %" in text, text
        await pilot.press("escape")
        # a Prometheus gone: the detail says why in one line, and charts what the dashboard kept
        prom.stop()
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: "the last hour could not be read: unreachable: Prometheus lab: " in charts_text(app)
        )
        assert "seconds ago" in charts_text(app) and "Traceback" not in charts_text(app)


async def test_a_prometheus_that_cannot_be_read_is_one_row_saying_why(tmp_path: Path) -> None:
    app = make_app(tmp_path, [], keys=lab_config(f"http://127.0.0.1:{free_port()}"))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "prometheus:lab") == "offline")
        view = app.fleet.views["prometheus:lab"]
        assert view.message is not None and "Prometheus lab: " in view.message and "refused" in view.message, (
            view.message
        )
        assert "Traceback" not in view.message


async def test_a_missing_secret_says_how_to_store_it(tmp_path: Path) -> None:
    app = make_app(tmp_path, [], keys=lab_config("http://127.0.0.1:9") + 'auth = "bearer"\n')
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "prometheus:lab") == "offline")
        message = app.fleet.views["prometheus:lab"].message or ""
        assert "keyring set gpu-tui prometheus:lab" in message and "GPU_TUI_PASSWORD_PROMETHEUS_LAB" in message
