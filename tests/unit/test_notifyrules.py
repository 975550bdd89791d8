"""The laptop side's notification decisions (core/notify/rules.py) and the low-utilisation rule
(core/metrics/lowutil.py): each event once per occurrence, re-armed when its condition clears."""

from __future__ import annotations

import pytest

from gpu_tui.config.settings import parse_settings
from gpu_tui.core.errors import ConfigError
from gpu_tui.core.metrics.history import HostHistory
from gpu_tui.core.metrics.lowutil import LowUtil, assess
from gpu_tui.core.models import GpuFrame, GpuSample
from gpu_tui.core.notify.rules import DEFAULT_EVENTS, EVENTS, FleetFacts, InstanceFacts, LaptopRules, Once

T0 = 1_796_000_000.0


def rules(
    *, idle_minutes: float = 15, unreachable_minutes: float = 10, balance_hours: float = 12, budget_daily: float = 50
) -> LaptopRules:
    return LaptopRules(
        idle_minutes=idle_minutes,
        unreachable_minutes=unreachable_minutes,
        balance_hours=balance_hours,
        budget_daily=budget_daily,
        currency="¥",
    )


def inst(
    name: str = "box",
    state: str = "online",
    idle: float | None = None,
    *,
    low_util: LowUtil | None = None,
    autodl: bool = False,
    billing: bool = False,
    last_message: str | None = None,
) -> InstanceFacts:
    return InstanceFacts(
        name=name,
        state=state,
        hourly_rate=2.0,
        idle_seconds=idle,
        low_util=low_util,
        autodl=autodl,
        billing=billing,
        last_message=last_message,
    )


def facts(
    now: float,
    *instances: InstanceFacts,
    day: str = "2026-12-01",
    today_cost: float | None = None,
    burn_per_hour: float = 0.0,
    balance: float | None = None,
    balance_hours_left: float | None = None,
) -> FleetFacts:
    return FleetFacts(
        now=now,
        day=day,
        instances=instances,
        today_cost=today_cost,
        burn_per_hour=burn_per_hour,
        balance=balance,
        balance_hours_left=balance_hours_left,
    )


def events(notices: list) -> list[tuple[str, str | None]]:
    return [(n.event, n.instance) for n in notices]


def test_once_fires_on_the_rising_edge_only_and_ignores_unknown() -> None:
    once = Once()
    assert [once.update("k", c) for c in (False, True, True, None, True, False, True)] == [
        False,
        True,
        False,
        False,
        False,
        False,
        True,
    ]


def test_idle_fires_once_per_stretch_naming_the_instance() -> None:
    r = rules()
    assert r.evaluate(facts(T0, inst(idle=14 * 60))) == []
    first = r.evaluate(facts(T0 + 60, inst(idle=15 * 60)))
    assert events(first) == [("idle", "box")]
    assert first[0].title == "box idle for 15m00s" and "¥2.00/h" in first[0].body
    assert r.evaluate(facts(T0 + 120, inst(idle=16 * 60))) == []  # still the same stretch
    assert r.evaluate(facts(T0 + 180, inst(idle=None))) == []  # busy again: re-armed
    assert events(r.evaluate(facts(T0 + 2000, inst(idle=20 * 60)))) == [("idle", "box")]


def test_unreachable_after_the_threshold_then_re_armed_when_back() -> None:
    r = rules(unreachable_minutes=10)
    assert r.evaluate(facts(T0, inst(state="offline", last_message="connection refused"))) == []
    assert r.evaluate(facts(T0 + 599, inst(state="connecting"))) == []
    got = r.evaluate(facts(T0 + 600, inst(state="offline", last_message="connection refused")))
    assert events(got) == [("unreachable", "box")]
    assert got[0].title == "box unreachable for 10m00s" and "connection refused" in got[0].body
    assert r.evaluate(facts(T0 + 900, inst(state="offline"))) == []
    assert r.evaluate(facts(T0 + 901, inst(state="online"))) == []
    assert r.evaluate(facts(T0 + 1000, inst(state="offline"))) == []  # the clock starts again
    assert events(r.evaluate(facts(T0 + 1600, inst(state="offline")))) == [("unreachable", "box")]


@pytest.mark.parametrize("state", ["stopped", "auth failed", "unknown host key"])
def test_states_that_wait_for_the_user_are_not_unreachable(state: str) -> None:
    r = rules()
    r.evaluate(facts(T0, inst(state=state)))
    assert r.evaluate(facts(T0 + 3600, inst(state=state))) == []


def test_balance_below_the_threshold_once_until_topped_up() -> None:
    r = rules(balance_hours=12)
    box = inst(autodl=True, billing=True)
    assert r.evaluate(facts(T0, box, balance=100.0, balance_hours_left=50.0)) == []
    got = r.evaluate(facts(T0 + 1, box, balance=20.0, balance_hours_left=10.0))
    assert events(got) == [("balance", None)]
    assert got[0].title == "AutoDL balance runs out in ~10h00m" and "¥20.00" in got[0].body and "box" in got[0].body
    assert r.evaluate(facts(T0 + 2, box, balance=19.0, balance_hours_left=9.5)) == []
    assert r.evaluate(facts(T0 + 3, box)) == []  # not fetched this tick: no change
    assert r.evaluate(facts(T0 + 4, box, balance=19.0, balance_hours_left=9.0)) == []
    assert r.evaluate(facts(T0 + 5, box, balance=500.0, balance_hours_left=float("inf"))) == []  # topped up
    assert events(r.evaluate(facts(T0 + 6, box, balance=5.0, balance_hours_left=2.5))) == [("balance", None)]


def test_budget_once_a_day_and_off_at_zero() -> None:
    r = rules(budget_daily=50)
    box = inst(billing=True)
    assert r.evaluate(facts(T0, box, today_cost=49.0)) == []
    got = r.evaluate(facts(T0 + 30, box, today_cost=51.0, burn_per_hour=2.0))
    assert events(got) == [("budget", None)]
    assert got[0].title == "Daily budget passed: ¥51.00 of ¥50.00" and "box" in got[0].body
    assert r.evaluate(facts(T0 + 60, box, today_cost=60.0)) == []
    assert events(r.evaluate(facts(T0 + 86400, box, today_cost=55.0, day="2026-12-02"))) == [("budget", None)]
    assert rules(budget_daily=0).evaluate(facts(T0, box, today_cost=1e6)) == []


def _history(util: int, *, minutes: float, cpu: float, vram_mib: int = 2000, total_mib: int = 24564) -> HostHistory:
    h = HostHistory(maxlen=600)
    ticks = int(minutes * 60)
    for i in range(ticks):
        t = T0 + i
        h.append(
            GpuFrame(
                taken_at=t,
                gpus=(
                    GpuSample(
                        index=0,
                        uuid="GPU-0",
                        name="RTX 4090",
                        utilization_gpu=util,
                        memory_used_mib=vram_mib,
                        memory_total_mib=total_mib,
                    ),
                ),
            )
        )
        if i % 5 == 0:
            h.append_cpu(t, cpu)
    return h


def test_low_util_with_a_saturated_cpu_blames_the_data_loader() -> None:
    h = _history(18, minutes=10, cpu=97.0)
    low = assess(h, T0 + 600)
    assert low is not None and low.kind == "loader"
    assert "data loader" in low.headline() and "18%" in low.headline()
    assert "num_workers" in low.advice() and "pin_memory" in low.advice()


def test_low_util_with_an_idle_cpu_and_free_vram_means_a_small_batch() -> None:
    low = assess(_history(12, minutes=10, cpu=8.0), T0 + 600)
    assert low is not None and low.kind == "batch" and "batch" in low.advice()


@pytest.mark.parametrize(
    ("util", "minutes", "cpu", "vram"),
    [
        (18, 5, 97.0, 2000),  # not ten minutes yet
        (55, 10, 97.0, 2000),  # busy enough
        (2, 10, 97.0, 2000),  # idle: the idle warning's business
        (12, 10, 60.0, 2000),  # CPU half busy: no clear cause
        (12, 10, 8.0, 22000),  # VRAM full: not a small batch
    ],
)
def test_no_advice_without_a_clear_case(util: int, minutes: float, cpu: float, vram: int) -> None:
    assert assess(_history(util, minutes=minutes, cpu=cpu, vram_mib=vram), T0 + minutes * 60) is None


def test_no_advice_from_stale_samples() -> None:
    assert assess(_history(18, minutes=10, cpu=97.0), T0 + 600 + 120) is None  # the link dropped


def test_low_util_event_fires_once_while_it_lasts() -> None:
    low = assess(_history(18, minutes=10, cpu=97.0), T0 + 600)
    r = rules()
    got = r.evaluate(facts(T0, inst(low_util=low)))
    assert events(got) == [("low_util", "box")] and got[0].title.startswith("box: GPU only 18% busy")
    assert r.evaluate(facts(T0 + 30, inst(low_util=low))) == []
    assert r.evaluate(facts(T0 + 60, inst())) == []
    assert events(r.evaluate(facts(T0 + 90, inst(low_util=low)))) == [("low_util", "box")]


def test_notify_settings_defaults_and_one_line_errors() -> None:
    s = parse_settings("")
    assert s.notify.events == DEFAULT_EVENTS and "low_util" not in s.notify.events and s.notify.urls == ()
    assert set(EVENTS) - set(DEFAULT_EVENTS) == {"low_util"}
    ok = parse_settings(
        '[notify]\nurls = ["ntfy://127.0.0.1/t", "autodl-wechat"]\nevents = ["low_util"]\n'
        "balance_hours = 6\nunreachable_minutes = 5\n"
    )
    assert ok.notify.events == ("low_util",) and ok.notify.balance_hours == 6
    for text, words in [
        ('[notify]\nevents = ["idel"]\n', "<config>:2: notify.events[0]: Input should be"),
        ("[notify]\nbalance_hours = 0\n", "<config>:2: notify.balance_hours: Input should be greater than 0"),
        ('[notify]\nurls = ["not a url"]\n', "<config>:2: notify.urls[0]"),
        ("[notify]\ntoken = 'x'\n", "secrets are never kept in the config file"),
    ]:
        with pytest.raises(ConfigError) as err:
            parse_settings(text)
        assert words in err.value.message and "\n" not in err.value.message
