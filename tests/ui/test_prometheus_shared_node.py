"""A node that is both one of the user's SSH instances and a lab's node in Prometheus (issue 26)
is one row: its GPU numbers from Prometheus, while Prometheus has them, with the instance's own
nvidia-smi stream closed meanwhile; jobs and the rest over SSH. When its exporter goes down the
row goes back to its own stream. Real sshd, Debian's real prometheus, loopback exporters."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pilothelp import make_app
from promhelp import DcgmExporter, Prometheus, require_prometheus
from sshd import descendants
from test_prometheus_pilot import lab_config
from waiting import until_sync, wait_for

from gpu_tui.ui.widgets.gpu_panel import GpuPanel


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[Prometheus, dict[str, DcgmExporter]]]:
    require_prometheus()
    exporters = {"node-a": DcgmExporter("node-a", 2), "node-b": DcgmExporter("node-b", 1)}
    exporters["node-a"].values[0]["DCGM_FI_DEV_GPU_UTIL"] = 77.0
    prom = Prometheus(tmp_path / "prom", [e.target for e in exporters.values()])
    try:
        prom.wait_ready()
        until_sync(lambda: len(prom.query("DCGM_FI_DEV_GPU_UTIL")) == 3, 30, what="the first scrape", step=0.2)
        yield prom, exporters
    finally:
        prom.stop()
        for e in exporters.values():
            e.stop()


def gpu_streams(pid: int | None) -> int:
    """Processes under the instance's sshd whose command line runs `nvidia-smi ... -lms` (the
    stream's shell and the fake itself)."""
    found = 0
    for p in descendants(pid) if pid is not None else ():
        try:
            argv = Path(f"/proc/{p}/cmdline").read_bytes()
        except OSError:
            continue
        found += b"nvidia-smi" in argv and b"-lms" in argv
    return found


def util0(app, name: str) -> int | None:
    view = app.fleet.views.get(name) if app.fleet is not None else None
    frame = view.frame if view is not None else None
    return frame.gpus[0].utilization_gpu if frame is not None and frame.gpus else None


async def test_an_ssh_instance_that_is_a_labs_node_is_one_row_with_the_labs_numbers(
    lab, sshd_factory, tmp_path: Path
) -> None:
    prom, exporters = lab
    box = sshd_factory("node-a")
    box.set_utilization(3)  # its own nvidia-smi reads 3 %, Prometheus 77 %
    app = make_app(tmp_path, [box], keys=lab_config(prom.url))
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: util0(app, "node-a") == 77, timeout=30)
        view = app.fleet.views["node-a"]
        assert view.ours and view.gpus_from == "prometheus:lab" and view.node == "node-a"
        await wait_for(pilot, lambda: list(app.dashboard.table.rows) == ["node-a", "node-b"], timeout=10)
        # its own stream is closed while Prometheus gives the numbers; the connection stays.
        # Prometheus can answer before the SSH login does: wait for the login, then the stream.
        await wait_for(pilot, lambda: view.shown_state == "online", timeout=30)
        await wait_for(pilot, lambda: gpu_streams(box.pid) == 0, timeout=15)
        assert view.shown_state == "online" and view.gpus_from == "prometheus:lab"
        panel = app.query_one(GpuPanel).render_view(view, app.dashboard.clock()).plain
        assert "GPUs from prometheus:lab" in panel, panel
        # its exporter down: back to its own nvidia-smi, the row stays online over SSH
        exporters["node-a"].stop()
        await wait_for(pilot, lambda: util0(app, "node-a") == 3 and gpu_streams(box.pid) > 0, timeout=60)
        assert view.gpus_from is None and view.shown_state == "online"
