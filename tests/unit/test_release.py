"""When a provider may release a stopped instance (issue 28): the rules, the date, the words, and
the notification a day and an hour before."""

from __future__ import annotations

from gpu_tui.core.notify.rules import FleetFacts, InstanceFacts, LaptopRules
from gpu_tui.core.power import DAY, RELEASE_RULES, release_at, release_line, rule_for

SEEN = 1_765_000_000.0


def test_autodl_counts_fifteen_days_from_the_last_sighting_and_an_instance_may_override_it() -> None:
    autodl = rule_for("autodl", None)
    assert autodl is not None and autodl.days == 15
    assert release_at(autodl, SEEN, up=False) == SEEN + 15 * DAY
    assert release_at(autodl, SEEN, up=True) is None  # up: nothing counts down
    assert release_at(autodl, None, up=False) is None  # never seen up: no date to give
    two = rule_for("autodl", 2)
    assert two is not None and release_at(two, SEEN, up=False) == SEEN + 2 * DAY
    assert two.keeps == autodl.keeps
    assert rule_for("autodl", 0) is None  # never released


def test_runpod_and_vast_keep_storage_while_it_bills_and_a_lab_box_has_no_rule() -> None:
    for provider in ("runpod", "vast"):
        rule = rule_for(provider, None)
        assert rule is not None and rule.days is None and release_at(rule, SEEN, up=False) is None
    assert rule_for("generic", None) is None
    custom = rule_for("generic", 30)
    assert custom is not None and release_at(custom, SEEN, up=False) == SEEN + 30 * DAY
    assert set(RELEASE_RULES) == {"autodl", "runpod", "vast"}


def test_the_line_says_when_and_what_keeps_it() -> None:
    rule = rule_for("autodl", None)
    assert rule is not None
    at = SEEN + 15 * DAY
    line = release_line("box", at, at - 3 * DAY, rule)
    assert line.startswith("box: its provider may release it and its data from ") and "(in 3d" in line
    assert "without a GPU" in line and "gpu-tui start" in line
    assert "now" in release_line("box", at, at + 60, rule)


def facts(now: float, at: float | None) -> FleetFacts:
    inst = InstanceFacts(
        name="box",
        state="offline",
        hourly_rate=1.0,
        idle_seconds=None,
        release_at=at,
        release_rule=rule_for("autodl", None),
    )
    return FleetFacts(now=now, day="2026-12-07", instances=[inst])


def test_the_release_notice_goes_out_a_day_before_and_again_an_hour_before() -> None:
    rules = LaptopRules(idle_minutes=15, unreachable_minutes=1e9, balance_hours=12, budget_daily=0, currency="¥")
    at = SEEN + 15 * DAY

    def sent(now: float) -> list[str]:
        return [n.title for n in rules.evaluate(facts(now, at)) if n.event == "release"]

    assert sent(at - 2 * DAY) == []
    day = sent(at - DAY + 60)
    assert len(day) == 1 and day[0].startswith("box: its data may be released in 23h")
    assert sent(at - DAY + 120) == []  # once
    hour = sent(at - 3000)
    assert len(hour) == 1 and "50m" in hour[0]
    assert sent(at - 2000) == [] and sent(at + 10) == []
    # seen up again, then powered off: a new date, a new occurrence
    later = at + 20 * DAY
    assert [n.event for n in rules.evaluate(facts(later - 1800, later))] == ["release"]


def test_no_date_no_notice() -> None:
    rules = LaptopRules(idle_minutes=15, unreachable_minutes=1e9, balance_hours=12, budget_daily=0, currency="¥")
    assert [n for n in rules.evaluate(facts(SEEN, None)) if n.event == "release"] == []


def test_an_unreachable_row_says_the_time_left_within_three_days() -> None:
    from gpu_tui.config.settings import InstanceConfig
    from gpu_tui.services.events import ConnState
    from gpu_tui.services.fleet import InstanceView
    from gpu_tui.ui.format import state_text

    view = InstanceView(
        InstanceConfig(name="box", host="h", provider="autodl"), state=ConnState.OFFLINE, retry_at=SEEN + 9
    )
    view.release_at = SEEN + 4 * DAY
    assert state_text(view, SEEN).plain == "offline 9s"  # days away: the retry countdown
    view.release_at = SEEN + DAY + 2 * 3600
    shown = state_text(view, SEEN)
    assert shown.plain == "offline ⌛1d" and shown.style == "bold red"
