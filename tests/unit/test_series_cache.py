"""services/jobs/series/cache.py: the copies of series files kept here are pruned: unused for a
month, or the least recently used while the whole passes its size; a load counts as a use; the
copy just written and a write still under way are never taken."""

from __future__ import annotations

import os
import time
from pathlib import Path

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.services.jobs.series.cache import MAX_AGE_S, PRUNE_EVERY_S, STRAY_TMP_S, SeriesCache

DAY = 86400.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def inst(name: str) -> InstanceConfig:
    return InstanceConfig(name=name, host="h")


def aged(path: Path, when: float) -> None:
    os.utime(path, (when, when))


def test_copies_unused_for_a_month_go_and_a_load_keeps_one(tmp_path: Path) -> None:
    clock = Clock(time.time())
    cache = SeriesCache(tmp_path / "series", clock=clock)
    a, b = inst("box-a"), inst("box-b")
    cache.save(a, "old", b'{"gen":"1"}\n[1]\n')
    cache.save(a, "used", b'{"gen":"2"}\n[2]\n')
    cache.save(b, "gone", b'{"gen":"3"}\n')
    for job, i in (("old", a), ("used", a), ("gone", b)):
        aged(cache.path(i, job), clock.now - 40 * DAY)
    # a run read again today: used, whatever its age
    clock.now += 1
    assert cache.load(a, "used") == b'{"gen":"2"}\n[2]\n'
    removed = cache.prune()
    assert sorted(p.name for p in removed) == ["gone.jsonl", "old.jsonl"]
    assert cache.path(a, "used").exists()
    assert not cache.path(b, "gone").parent.exists()  # its instance's directory went with it
    assert cache.prune() == []


def test_past_its_size_the_least_recently_used_go_first_never_the_one_just_written(tmp_path: Path) -> None:
    clock = Clock(time.time())
    cache = SeriesCache(tmp_path / "series", max_bytes=3000, clock=clock)
    box = inst("box")
    for n in range(5):  # 1000 bytes each, a minute apart
        cache.save(box, f"j{n}", b"x" * 999 + b"\n")
        aged(cache.path(box, f"j{n}"), clock.now - (5 - n) * 60)
    big = cache.path(box, "j0")
    removed = cache.prune(keep=big)  # the oldest, but the copy in hand
    assert sorted(p.name for p in removed) == ["j1.jsonl", "j2.jsonl"]
    assert sorted(p.name for p in big.parent.iterdir()) == ["j0.jsonl", "j3.jsonl", "j4.jsonl"]


def test_a_save_prunes_at_most_every_ten_minutes_and_leaves_a_write_under_way(tmp_path: Path) -> None:
    clock = Clock(time.time())
    cache = SeriesCache(tmp_path / "series", clock=clock)
    box = inst("box")
    cache.save(box, "a", b"[1]\n")  # the first save prunes (nothing to take)
    stale = cache.path(box, "stale")
    stale.write_bytes(b"[0]\n")
    aged(stale, clock.now - MAX_AGE_S - 1)
    under_way = cache.path(box, "a").parent / ".b.jsonl.abc123.tmp"
    left = cache.path(box, "a").parent / ".c.jsonl.def456.tmp"
    under_way.write_bytes(b"")
    left.write_bytes(b"")
    aged(left, clock.now - STRAY_TMP_S - 1)
    clock.now += 60
    cache.save(box, "b", b"[2]\n")
    assert stale.exists()  # a minute after the last walk: none
    clock.now += PRUNE_EVERY_S
    cache.save(box, "b", b"[3]\n")
    assert not stale.exists() and not left.exists()
    assert under_way.exists() and cache.load(box, "b") == b"[3]\n"


def test_a_load_gives_whole_lines_and_nothing_where_there_is_no_copy(tmp_path: Path) -> None:
    cache = SeriesCache(tmp_path / "series")
    box = inst("box")
    assert cache.load(box, "none") == b""
    cache.path(box, "torn").parent.mkdir(parents=True)
    cache.path(box, "torn").write_bytes(b"[1]\n[2")
    assert cache.load(box, "torn") == b"[1]\n"
    assert cache.prune() == [] and SeriesCache(tmp_path / "nowhere").prune() == []


def test_a_decoder_is_saved_beside_its_copy_when_it_has_read_enough_more_and_goes_with_it(tmp_path: Path) -> None:
    from gpu_tui.core.trainlog.series_decode import SeriesDecoder
    from gpu_tui.services.jobs.series.cache import DECODED_STEP

    cache = SeriesCache(tmp_path / "series")
    box = inst("box")
    text = "".join(f'["loss",{s},{1 / s},null]\n' for s in range(1, 200))
    cache.save(box, "j", text.encode())
    decoder = SeriesDecoder()
    decoder.feed(text)
    cache.keep_decoded(box, "j", "g1", len(text), decoder)
    saved = cache.path(box, "j").with_suffix(".decoded")
    first = saved.read_bytes()
    # another process: from the file; another generation: none
    other = SeriesCache(tmp_path / "series")
    held = other.decoded(box, "j", "g1")
    assert held is not None and held[1] == len(text) and held[0].result() == decoder.result()
    assert SeriesCache(tmp_path / "series").decoded(box, "j", "g2") is None
    # in memory, taken out while in use: a second reader decodes on its own
    assert cache.decoded(box, "j", "g1") is not None and cache.decoded(box, "j", "g1") is not None  # the 2nd from disk
    decoder.feed('["loss",200,0.005,null]\n')
    cache.keep_decoded(box, "j", "g1", len(text) + 25, decoder)
    assert saved.read_bytes() == first  # 25 bytes more: not written again
    cache.keep_decoded(box, "j", "g1", len(text) + DECODED_STEP, decoder)
    assert saved.read_bytes() != first
    # unused for a month: the copy and its decoder go together; a decoder without its copy goes
    aged(cache.path(box, "j"), time.time() - MAX_AGE_S - 1)
    (saved.parent / "orphan.decoded").write_bytes(b"x")
    assert sorted(p.name for p in cache.prune()) == ["j.jsonl", "orphan.decoded"] and not saved.exists()
