"""ui/arrange: the dashboard's sort (`o`), show-only (`w`) and name filter (`/`) over
plain views, and the fleet's GPU totals for the summary line (issue 26). The dashboard's use of
them, keys and rows, is tests/ui/test_arrange_pilot.py."""

from __future__ import annotations

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JobFacts, JobInfo
from gpu_tui.core.models import GpuFrame, GpuSample
from gpu_tui.services.events import ConnState
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.arrange import SHOWS, SORTS, Arrangement, arrange, error_count, gpu_totals


def view(name: str, *utils: float | None, state: ConnState = ConnState.ONLINE, **kw: object) -> InstanceView:
    gpus = tuple(
        GpuSample(index=i, uuid=None, name=None, utilization_gpu=u, memory_used_mib=1, memory_total_mib=2)
        for i, u in enumerate(utils)
    )
    return InstanceView(InstanceConfig(name=name, host="h"), state=state, frame=GpuFrame(0.0, gpus), **kw)  # type: ignore[arg-type]


def failed_job() -> JobInfo:
    return JobInfo(JobFacts(id="j1", started_at=0, exit_code=1), state="failed")


FLEET = [
    view("b-busy", 90, 80),
    view("a-idle", 0, 3),
    view("c-half", 95, 0),
    view("d-down", 99, state=ConnState.OFFLINE),
    view("e-xid", 50, 50, 50, xids={1: 79, 2: 48}),
    view("f-unread", None),
]


def names(how: Arrangement) -> list[str]:
    return arrange(FLEET, how, idle_util=10.0)


def test_the_cycles_come_back_to_where_they_started() -> None:
    how = Arrangement()
    assert how.plain
    sorts = [how.sort]
    for _ in SORTS:
        how = how.next_sort()
        sorts.append(how.sort)
    assert sorts == [*SORTS, "config"] and how.plain
    shows = [how.show]
    for _ in SHOWS:
        how = how.next_show()
        shows.append(how.show)
    assert shows == [*SHOWS, "all"]
    assert not how.with_text(" a1 ").plain and how.with_text(" a1 ").text == "a1" and how.with_text("  ").plain


def test_config_order_name_and_utilisation_high_first() -> None:
    assert names(Arrangement()) == [v.name for v in FLEET]
    assert names(Arrangement(sort="name")) == ["a-idle", "b-busy", "c-half", "d-down", "e-xid", "f-unread"]
    # an offline row's last frame is not a reading, and an unreadable GPU sorts after 0 %
    assert names(Arrangement(sort="util")) == ["b-busy", "e-xid", "c-half", "a-idle", "d-down", "f-unread"]


def test_idle_gpus_most_first_and_show_only_those_with_one() -> None:
    assert names(Arrangement(sort="idle")) == ["a-idle", "c-half", "b-busy", "d-down", "e-xid", "f-unread"]
    assert names(Arrangement(show="idle")) == ["a-idle", "c-half"]


def test_errors_first_count_xids_connection_faults_gpu_errors_and_failed_jobs() -> None:
    assert [error_count(v) for v in FLEET] == [0, 0, 0, 1, 2, 0]
    assert error_count(view("job", 50, jobs=(failed_job(),))) == 1
    assert error_count(view("stopped", state=ConnState.STOPPED)) == 0  # asked for, not a fault
    assert error_count(view("connecting", state=ConnState.CONNECTING)) == 0
    assert names(Arrangement(sort="errors"))[:2] == ["e-xid", "d-down"]
    assert names(Arrangement(show="errors")) == ["d-down", "e-xid"]


def test_the_name_filter_ignores_case_and_combines_with_the_rest() -> None:
    assert names(Arrangement(text="IDLE")) == ["a-idle"]
    assert names(Arrangement(text="-", show="idle", sort="name")) == ["a-idle", "c-half"]
    assert names(Arrangement(text="zzz")) == []


def test_gpu_totals_count_readable_gpus_and_the_xids() -> None:
    t = gpu_totals(FLEET, idle_util=10.0)
    # b: 2 busy; a: 2 idle; c: 1 busy 1 idle; d offline: none; e: 3 busy; f: unreadable
    assert (t.busy, t.idle, t.xids) == (6, 3, 2)
    assert t.mean_util is not None and round(t.mean_util, 1) == round((90 + 80 + 0 + 3 + 95 + 0 + 150) / 9, 1)
    empty = gpu_totals([view("x", None)], idle_util=10.0)
    assert (empty.busy, empty.idle, empty.mean_util, empty.xids) == (0, 0, None, 0)
