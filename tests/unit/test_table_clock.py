"""Which rows the dashboard's one-second tick rebuilds (ui/widgets/instance_table): only those
whose text moves with the clock alone: cost so far, a reconnect countdown, an idle time short
of the idle threshold. A lab's node (no cost) is left to its own reads."""

from __future__ import annotations

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.models import GpuFrame, GpuSample, HostStats
from gpu_tui.services.events import ConnState
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.widgets.instance_table import InstanceTable

NOW = 10_000.0


def view(*, source: str = "ssh", state: ConnState = ConnState.ONLINE, **kw: object) -> InstanceView:
    v = InstanceView(InstanceConfig(name="box", host="h", hourly_rate=2.0), state=state, source=source)
    gpu = GpuSample(index=0, uuid=None, name=None, utilization_gpu=0, memory_used_mib=1, memory_total_mib=2)
    v.frame = GpuFrame(taken_at=NOW, gpus=(gpu,))
    for key, value in kw.items():
        setattr(v, key, value)
    return v


def clocked(v: InstanceView, idle_after: float | None = 900.0) -> bool:
    table = InstanceTable("¥")
    table.idle_after = idle_after
    table.set_row = lambda key, line: None  # type: ignore[method-assign]  # no app to paint in
    table.show(v, NOW)
    return v.name in table.clocked


def test_cost_so_far_and_a_countdown_move_with_the_clock() -> None:
    assert clocked(view(uptime_base=(NOW, 60)))  # cost so far grows by the second
    assert clocked(view(state=ConnState.OFFLINE, retry_at=NOW + 30))  # `offline 30s`
    assert not clocked(view(state=ConnState.OFFLINE))  # no retry planned: nothing counts down


def test_an_idle_time_moves_until_it_reaches_the_threshold() -> None:
    assert clocked(view(gpus_idle_since=NOW - 60))  # it will say `online idle` at 900 s
    assert not clocked(view(gpus_idle_since=NOW - 901))  # it says so now, and goes on saying it
    assert not clocked(view(gpus_idle_since=NOW - 60), idle_after=None)


def test_a_labs_node_is_left_to_its_reads() -> None:
    node = view(source="prometheus:lab", uptime_base=(NOW, 60))
    node.stats = HostStats(taken_at=NOW, uptime_seconds=60)
    assert not clocked(node)  # no cost so far on a node nobody pays for by the hour here
    assert clocked(view(source="prometheus:lab", gpus_idle_since=NOW - 60))  # idle warnings still come
