"""A lab's fleet through a real Prometheus (issue 26's first slice): Debian's prometheus scrapes
loopback stand-ins for dcgm-exporter every second, and services/monitor/prometheus reads every
node with one query per metric. An exporter that goes down keeps its node's name, offline; NaN
is not a reading; a bad address, a 401 and a refused query are one line each."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from loophttp import LoopbackServer
from promhelp import DcgmExporter, Prometheus, free_port, require_prometheus
from sshhelp import run_gpu_tui
from waiting import until_sync

from gpu_tui.core.errors import AuthFailed, RemoteError, Unreachable
from gpu_tui.services.monitor.prometheus import PromSource, read_fleet, read_history


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[tuple[Prometheus, dict[str, DcgmExporter]]]:
    require_prometheus()
    exporters = {name: DcgmExporter(name, gpus) for name, gpus in (("node-a", 8), ("node-b", 2), ("node-c", 1))}
    prom = Prometheus(tmp_path / "prom", [e.target for e in exporters.values()], labels={"cluster": "a"})
    try:
        prom.wait_ready()
        until_sync(
            lambda: (
                len([r for r in prom.query("up") if r["value"][1] == "1"]) == 3
                and len(prom.query("DCGM_FI_DEV_GPU_UTIL")) == 11
            ),
            30,
            what="prometheus to scrape the three exporters",
            step=0.2,
        )
        yield prom, exporters
    finally:
        prom.stop()
        for e in exporters.values():
            e.stop()


def read(prom: Prometheus, **kw: object):
    return asyncio.run(read_fleet(PromSource("lab", prom.url, **kw)))  # type: ignore[arg-type]


def test_every_node_in_one_query_per_metric(lab) -> None:
    prom, _exporters = lab
    got = read(prom)
    assert got.queries == 15  # six metrics, up, the exporters names, seven of node_exporter: however many nodes
    assert sorted(got.nodes) == ["node-a", "node-b", "node-c"]
    a = got.nodes["node-a"]
    assert a.up is True and [g.index for g in a.gpus] == list(range(8)) and a.xids == {}
    g3 = a.gpus[3]
    assert (g3.utilization_gpu, g3.memory_used_mib, g3.memory_total_mib) == (30, 4096, 81920)
    assert (g3.power_draw_w, g3.temperature_c, g3.uuid, g3.name) == (
        103.5,
        43,
        "GPU-node-a-0003",
        "NVIDIA A100-SXM4-80GB",
    )
    assert got.bytes > 0


def test_an_xid_nan_and_an_exporter_that_went_down(lab) -> None:
    prom, exporters = lab
    exporters["node-b"].values[1]["DCGM_FI_DEV_XID_ERRORS"] = 79.0  # fell off the bus
    exporters["node-c"].values[0]["DCGM_FI_DEV_POWER_USAGE"] = "NaN"
    until_sync(lambda: read(prom).nodes["node-b"].xids == {1: 79}, 30, what="the Xid scraped", step=0.3)
    # each exporter is scraped on its own second: wait for node-c's scrape too

    def c_power() -> float | None:
        return read(prom).nodes["node-c"].gpus[0].power_draw_w

    until_sync(lambda: c_power() != 100.5, 30, what="node-c's NaN scraped", step=0.3)
    assert c_power() is None  # not 0.0: no reading
    exporters["node-c"].stop()
    until_sync(lambda: read(prom).nodes["node-c"].up is False, 30, what="node-c's exporter down", step=0.3)
    c = read(prom).nodes["node-c"]
    assert c.name == "node-c" and c.gpus == ()  # listed under the name it had, offline


def test_a_label_selector_picks_the_fleet(lab) -> None:
    prom, _exporters = lab
    assert sorted(read(prom, match='{cluster="a"}').nodes) == ["node-a", "node-b", "node-c"]
    assert read(prom, match='cluster="b"').nodes == {}


def history(prom: Prometheus, node: str, seconds: float = 40, **kw: object):
    source = PromSource("lab", prom.url, **kw)  # type: ignore[arg-type]
    return asyncio.run(read_history(source, node, end=time.time(), seconds=seconds, points=int(seconds) + 1))


def test_a_nodes_history_from_query_range(lab) -> None:
    """The detail screen's charts of a lab node: its GPUs' last minutes, that node only, on a
    step grid (1 s here: 40 s in 41 points), what was scraped before a change and after it."""
    prom, exporters = lab
    until_sync(lambda: len(prom.query("DCGM_FI_DEV_GPU_UTIL[10s]")) == 11, 30, what="10 s of samples", step=0.3)
    exporters["node-a"].values[2]["DCGM_FI_DEV_GPU_UTIL"] = 88.0
    until_sync(lambda: read(prom).nodes["node-a"].gpus[2].utilization_gpu == 88, 30, what="88 % scraped", step=0.3)
    got = history(prom, "node-a", match='{cluster="a"}')
    assert got.step == 1.0 and got.points == 41
    assert sorted(got.utilization) == list(range(8)) and sorted(got.memory_used_mib) == list(range(8))
    util2 = [u for u in got.utilization[2] if u is not None]
    assert util2[0] == 20.0 and util2[-1] == 88.0, util2  # before the change, then after it
    assert got.utilization[2][0] is None  # 40 s ago Prometheus had not started: no sample, not a 0
    assert {m for m in got.memory_used_mib[3] if m is not None} == {4096.0}
    assert sorted(history(prom, "node-c").utilization) == [0]  # one GPU: node-a's are not mixed in
    # a node it does not hold, or a name that is not one (quotes, a regex): nothing, no error
    for odd in ("node-z", 'no"de', "node-.*", "nœud\\"):
        assert history(prom, odd).utilization == {}, odd


def test_bad_input_is_one_line(lab, tmp_path: Path) -> None:
    prom, _exporters = lab
    with pytest.raises(RemoteError) as refused:
        read(prom, match="{cluster=}")
    assert "Prometheus lab (HTTP 400): bad_data:" in refused.value.line()
    with pytest.raises(Unreachable):
        asyncio.run(read_fleet(PromSource("lab", f"http://127.0.0.1:{free_port()}", timeout=3)))

    class Refuse(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = LoopbackServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(AuthFailed) as auth:
            asyncio.run(read_fleet(PromSource("lab", f"http://127.0.0.1:{server.server_address[1]}", token="s3cret")))
        assert "refused the credentials (HTTP 401)" in auth.value.line() and "s3cret" not in auth.value.line()
    finally:
        server.shutdown()
        server.server_close()


def test_status_lists_a_labs_nodes(lab, tmp_path: Path) -> None:
    """A config with only a Prometheus: `status` answers for its nodes, offline ones too."""
    prom, exporters = lab
    exporters["node-b"].values[1]["DCGM_FI_DEV_XID_ERRORS"] = 79.0
    exporters["node-c"].stop()
    until_sync(lambda: read(prom).nodes["node-c"].up is False, 30, what="node-c's exporter down", step=0.3)
    until_sync(lambda: read(prom).nodes["node-b"].xids == {1: 79}, 30, what="node-b's Xid scraped", step=0.3)
    extra = f'\n[prometheus.lab]\nurl = "{prom.url}"\nmatch = \'{{cluster="a"}}\'\nhourly_rate = 1.5\ncurrency = "$"\n'
    res = run_gpu_tui(tmp_path, [], "status", "--json", config_extra=extra)
    assert res.returncode == 3, res.stderr  # a node is offline: partial, as for instances
    by_name = {i["name"]: i for i in json.loads(res.stdout)["instances"]}
    assert sorted(by_name) == ["node-a", "node-b", "node-c"]
    a = by_name["node-a"]
    assert (a["online"], a["source"], a["hourly_rate"], a["currency"], len(a["gpus"])) == (
        True,
        "prometheus:lab",
        12.0,  # $1.5 a GPU-hour x 8
        "$",
        8,
    )
    assert a["gpus"][3]["utilization_gpu"] == 30 and a["gpus"][3]["memory_total_mib"] == 81920
    c = by_name["node-c"]
    assert (c["online"], c["gpus"], c["error"]) == (False, [], "its exporter is down (Prometheus up == 0)")
    assert "node-c: its exporter is down (Prometheus up == 0)" in res.stderr
    # an Xid is the fault it is, in JSON, on stderr and under its node in the table
    fell = "the GPU has fallen off the bus: reset it or reboot the node"
    assert by_name["node-b"]["xids"] == [{"gpu": 1, "xid": 79, "meaning": fell}]
    assert by_name["node-a"]["xids"] == []
    assert f"node-b: GPU 1: Xid 79: {fell}" in res.stderr
    table = run_gpu_tui(tmp_path, [], "status", config_extra=extra)
    assert "node-a" in table.stdout and "node-c" in table.stdout, table.stdout
    assert f"  [1] Xid 79: {fell}" in table.stdout.splitlines()


def test_status_one_row_for_an_instance_that_is_a_labs_node(lab, sshd_factory, tmp_path: Path) -> None:
    """An SSH entry named as a lab's node: one entry, the instance's, with the lab's GPU numbers
    and Xids; its login, uptime and cost over SSH."""
    prom, exporters = lab
    exporters["node-b"].values[1]["DCGM_FI_DEV_XID_ERRORS"] = 79.0
    until_sync(lambda: read(prom).nodes["node-b"].xids == {1: 79}, 30, what="node-b's Xid scraped", step=0.3)
    box = sshd_factory("node-b")  # its own nvidia-smi: the H100 capture, one GPU
    extra = f'\n[prometheus.lab]\nurl = "{prom.url}"\nhourly_rate = 1.5\n'
    res = run_gpu_tui(tmp_path, [box], "status", "--json", config_extra=extra)
    assert res.returncode == 3, res.stderr  # the Xid is a fault to look at
    rows = json.loads(res.stdout)["instances"]
    assert [i["name"] for i in rows] == ["node-b", "node-a", "node-c"]
    b = rows[0]
    assert (b["source"], b["gpus_from"], b["online"], len(b["gpus"])) == ("ssh", "prometheus:lab", True, 2)
    assert [g["utilization_gpu"] for g in b["gpus"]] == [0, 10] and isinstance(b["uptime_seconds"], int)
    assert [x["xid"] for x in b["xids"]] == [79]
    assert rows[1]["source"] == rows[1]["gpus_from"] == "prometheus:lab"


def test_status_says_when_the_prometheus_cannot_be_read(tmp_path: Path) -> None:
    extra = f'\n[prometheus.lab]\nurl = "http://127.0.0.1:{free_port()}"\n'
    res = run_gpu_tui(tmp_path, [], "status", "--json", config_extra=extra)
    (row,) = json.loads(res.stdout)["instances"]
    assert (row["name"], row["online"], row["source"]) == ("prometheus:lab", False, "prometheus:lab")
    assert res.returncode == 3 and "gpu-tui: prometheus:lab: " in res.stderr and "Traceback" not in res.stderr
    bad = run_gpu_tui(tmp_path, [], "status", config_extra='\n[prometheus.lab]\nurl = "prometheus.lab:9090"\n')
    assert bad.returncode == 2 and "prometheus.lab.url" in bad.stderr and "Traceback" not in bad.stderr
