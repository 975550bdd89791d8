"""services/billing.py on a real ledger file: what the dashboard's Billing writes at once, what it
holds back and when that is written; a one-shot command's writes at once."""

from __future__ import annotations

from pathlib import Path

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.services.billing import DASHBOARD_WRITE_SECONDS, Billing
from gpu_tui.services.ledger import Ledger

T0 = 1_750_000_000.0
BOX = InstanceConfig(name="box", host="box.example", hourly_rate=2.0)


def stored(path: Path) -> list[tuple[float, float, float, str | None]]:
    """The ledger as another process reads it: (start, end, rate, currency) per interval."""
    with Ledger(path) as other:
        return [(iv.start, iv.end, iv.rate, iv.currency) for iv in other.intervals()]


def test_the_dashboard_holds_repeats_and_writes_news_at_once(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    billing = Billing.for_dashboard(path)
    for k in range(10):  # every second, as the stats stream comes
        billing.seen_up(BOX, 3600 + k, T0 + k)
    assert stored(path) == [(T0 - 3600, T0, 2.0, None)]  # the first only: the rest is held
    later = T0 + DASHBOARD_WRITE_SECONDS + 1
    billing.seen_up(BOX, 3600 + later - T0, later)  # the hold is over: written
    assert stored(path)[0][1] == later
    dollars = BOX.model_copy(update={"currency": "$"})
    billing.seen_up(dollars, 3600 + later + 1 - T0, later + 1)  # a new currency: at once
    assert [c for *_rest, c in stored(path)] == [None, "$"]
    pricier = dollars.model_copy(update={"hourly_rate": 3.0})
    billing.seen_up(pricier, 3600 + later + 2 - T0, later + 2)  # a new rate: at once
    assert [rate for _s, _e, rate, _c in stored(path)] == [2.0, 2.0, 3.0]
    billing.seen_up(pricier, 3600 + later + 3 - T0, later + 3)  # a repeat: held ...
    assert stored(path)[-1][1] == later + 2
    assert billing.intervals()[-1].end == later + 3  # ... until a read, which writes it first
    billing.seen_up(pricier, 5, later + 4)  # a reboot: at once
    assert len(stored(path)) == 4
    billing.close()


def test_a_held_sighting_is_written_on_close_and_before_a_shutdown(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    billing = Billing.for_dashboard(path)
    billing.seen_up(BOX, 3600, T0)
    billing.seen_up(BOX, 3610, T0 + 10)  # held
    assert billing.shut_down("box", T0 + 20)
    ((_start, end, _rate, _cur),) = stored(path)
    assert end == T0 + 20  # the held sighting kept it open to the shutdown
    billing.seen_up(BOX, 5, T0 + 100)
    billing.seen_up(BOX, 15, T0 + 110)  # held
    billing.close()
    assert stored(path)[-1][1] == T0 + 110


def test_a_command_writes_at_once_and_a_power_on_bills_from_now(tmp_path: Path) -> None:
    path = tmp_path / "l.sqlite3"
    with Billing(path) as billing:
        billing.seen_up(BOX, 3600, T0)
        billing.seen_up(BOX, 3601, T0 + 1)
        assert stored(path) == [(T0 - 3600, T0 + 1, 2.0, None)]
        assert billing.seen_many([(BOX, None, T0 + 2)])  # no uptime: no sighting, nothing written
        assert billing.powered_on(BOX, T0 + 5000, rate=2.5)  # the price the start reported
    assert stored(path)[-1] == (T0 + 5000, T0 + 5000, 2.5, None)
    with Billing(path) as billing:
        assert not billing.shut_down("nothing-here", T0)  # nothing open to close


async def test_queued_sightings_are_written_off_the_loop_once_a_tick_and_before_any_read_or_close(
    tmp_path: Path,
) -> None:
    path = tmp_path / "l.sqlite3"
    billing = Billing.for_dashboard(path)
    other = BOX.model_copy(update={"name": "other"})
    billing.queue(BOX, 3600, T0)
    billing.queue(other, 60, T0)
    billing.queue(BOX, None, T0 + 1)  # an unknown uptime is no sighting
    assert billing.queued == 3 and stored(path) == []  # nothing written on the event loop
    assert await billing.write_queued()
    assert billing.queued == 0
    assert sorted(stored(path)) == [(T0 - 3600, T0, 2.0, None), (T0 - 60, T0, 2.0, None)]
    assert await billing.write_queued()  # nothing queued: nothing to do
    billing.queue(BOX, 3600 + DASHBOARD_WRITE_SECONDS + 1, T0 + DASHBOARD_WRITE_SECONDS + 1)
    # a read writes the queue first
    assert max(iv.end for iv in billing.intervals() if iv.name == "box") == T0 + DASHBOARD_WRITE_SECONDS + 1
    billing.queue(other, 70, T0 + 10)
    assert billing.shut_down("other", T0 + 10)  # the queue is written before the interval closes
    assert [e for s, e, _r, _c in sorted(stored(path)) if s == T0 - 60] == [T0 + 10]
    billing.queue(BOX, 3600 + 2 * DASHBOARD_WRITE_SECONDS + 2, T0 + 2 * DASHBOARD_WRITE_SECONDS + 2)
    billing.close()
    assert max(e for _s, e, _r, _c in stored(path)) == T0 + 2 * DASHBOARD_WRITE_SECONDS + 2
