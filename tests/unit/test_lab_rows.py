"""services/fleet's rows for a lab's nodes (issue 26), read by read: the lab's own row while
nothing is known and it cannot be read, gone once its nodes come; a node gone from Prometheus
offline under its name; a node that is also an SSH entry stays that entry's row (its Xids added, its GPU numbers
Prometheus's while it has them);
a rate per GPU follows the node's GPU count. The real Prometheus is tests/ui/test_prometheus_pilot."""

from __future__ import annotations

from stubhost import StubHost

from gpu_tui.config.settings import InstanceConfig, PrometheusConfig
from gpu_tui.core.metrics.dcgm import NodeReading
from gpu_tui.core.models import GpuSample
from gpu_tui.services.fleet import Fleet, FleetEvent, ViewRemoved
from gpu_tui.services.monitor.prometheus import PromSource
from gpu_tui.services.monitor.promwatch import LabRead


def gpus(n: int, util: int = 50) -> tuple[GpuSample, ...]:
    return tuple(
        GpuSample(index=i, uuid=None, name=None, utilization_gpu=util, memory_used_mib=1, memory_total_mib=2)
        for i in range(n)
    )


def make(ssh: list[InstanceConfig] | None = None) -> tuple[Fleet, list[tuple[str, FleetEvent]]]:
    seen: list[tuple[str, FleetEvent]] = []
    cfg = PrometheusConfig(url="http://prom.lab:9090", hourly_rate=2.0)
    fleet = Fleet(
        [(c, StubHost()) for c in ssh or []],
        labs=[("lab", cfg, lambda: PromSource("lab", cfg.url))],
        on_change=lambda name, event: seen.append((name, event)),
        clock=lambda: 1000.0,
    )
    return fleet, seen


def test_the_labs_own_row_until_its_nodes_come() -> None:
    fleet, seen = make()
    fleet._lab_read(LabRead("lab", None, "unreachable: Prometheus lab: refused", 1.0))
    assert list(fleet.views) == ["prometheus:lab"]
    assert fleet.views["prometheus:lab"].message == "unreachable: Prometheus lab: refused"
    fleet._lab_read(LabRead("lab", {"n1": NodeReading("n1", gpus(4), True)}, None, 2.0))
    assert list(fleet.views) == ["n1"] and ("prometheus:lab", ViewRemoved("prometheus:lab")) in seen
    n1 = fleet.views["n1"]
    assert (n1.shown_state, n1.config.hourly_rate, n1.ours, n1.cost_so_far(3.0)) == ("online", 8.0, False, None)
    # unreadable again: the nodes it had go offline with the reason; no stand-in row comes back
    fleet._lab_read(LabRead("lab", None, "unreachable: Prometheus lab: refused", 3.0))
    assert list(fleet.views) == ["n1"] and fleet.views["n1"].message == "unreachable: Prometheus lab: refused"


def test_a_node_gone_from_prometheus_stays_offline_and_its_rate_follows_its_gpus() -> None:
    fleet, _seen = make()
    fleet._lab_read(LabRead("lab", {"n1": NodeReading("n1", gpus(8), True), "n2": NodeReading("n2", gpus(1))}, None, 1))
    assert fleet.views["n1"].config.hourly_rate == 16.0
    fleet._lab_read(LabRead("lab", {"n1": NodeReading("n1", gpus(7), True)}, None, 2))
    assert fleet.views["n1"].config.hourly_rate == 14.0  # a GPU fell out of the exporter's series
    n2 = fleet.views["n2"]
    assert n2.shown_state == "offline" and n2.message is not None and "no longer in Prometheus" in n2.message


def test_a_node_that_is_an_ssh_entry_is_that_entrys_row() -> None:
    box = InstanceConfig(name="box", host="gpu-07")
    fleet, _seen = make([box])
    fleet._lab_read(LabRead("lab", {"gpu-07": NodeReading("gpu-07", gpus(2, util=61), True, {1: 79})}, None, 1))
    box_view = fleet.views["box"]
    assert list(fleet.views) == ["box"] and box_view.xids == {1: 79} and box_view.ours
    # its GPU numbers are Prometheus's while Prometheus has them; its own stream rests
    assert box_view.gpus_from == "prometheus:lab" and box_view.node == "gpu-07"
    assert box_view.frame is not None and [g.utilization_gpu for g in box_view.frame.gpus] == [61, 61]
    assert fleet.monitors["box"]._gpus_elsewhere
    # its exporter down, or the node gone from Prometheus: back to its own stream
    fleet._lab_read(LabRead("lab", {"gpu-07": NodeReading("gpu-07", gpus(2), False)}, None, 2))
    assert box_view.gpus_from is None and not fleet.monitors["box"]._gpus_elsewhere
    fleet._lab_read(LabRead("lab", {"gpu-07": NodeReading("gpu-07", gpus(2), True)}, None, 3))
    assert box_view.gpus_from == "prometheus:lab"
    fleet._lab_read(LabRead("lab", {}, None, 4))
    assert box_view.gpus_from is None and list(fleet.views) == ["box"]
    fleet._lab_read(LabRead("lab", {"gpu-07": NodeReading("gpu-07", gpus(2), True)}, None, 5))
    fleet._lab_read(LabRead("lab", None, "unreachable: Prometheus lab: refused", 6))
    assert box_view.gpus_from is None and box_view.message is None  # the lab's fault is not the instance's


def test_a_hostname_an_instance_name_cannot_hold_is_made_one() -> None:
    fleet, _seen = make()
    fleet._lab_read(LabRead("lab", {"dgx a/1": NodeReading("dgx a/1", gpus(1), True)}, None, 1))
    assert list(fleet.views) == ["dgx_a_1"]
