"""series.last (core/trainlog/series.last_line, split_last) and how `jobs` uses it
(services/jobs/runner.info_with_summary): the whole log's loss and progress fill in what the
log's end does not say, and never overrule what that end says now."""

from __future__ import annotations

from gpu_tui.core.jobs import JobFacts
from gpu_tui.core.trainlog.read import summarize
from gpu_tui.core.trainlog.series import SeriesReader, last_line
from gpu_tui.core.trainlog.series_decode import split_last
from gpu_tui.services.jobs.runner import info_with_summary

HEAD = b"***** Running training *****\n  Num Epochs = 2\n  Total optimization steps = 1000\n"
NOISE = b"".join(f"[worker {i % 8}] prefetched shard {i:06d}\n".encode() for i in range(400))  # ~14 KB


def steps(a: int, b: int) -> bytes:
    return b"".join(f"step {s} | loss {1.0 / s:.4f}\n".encode() for s in range(a, b))


def whole(log: bytes) -> bytes:
    reader = SeriesReader()
    reader.feed(log)
    return last_line(reader, len(log))


def test_the_line_round_trips_and_anything_else_is_the_log() -> None:
    log = HEAD + steps(1, 501)
    last, rest = split_last(whole(log) + b"the log's end\n")
    assert rest == b"the log's end\n"
    assert last is not None and last.read == last.size == len(log) and last.last_loss == 0.002
    assert last.progress == {
        "percent": 50.0,
        "eta_seconds": None,
        "epoch": None,
        "epochs": 2,
        "step": 500,
        "steps": 1000,
        "scope": "run",
    }
    assert split_last(b"no summariser here\n") == (None, b"no summariser here\n")
    assert split_last(b'@@series-last {"read": 1, "last\n' + b"log\n") == (None, b"log\n")  # torn: the log stays
    nan, _ = split_last(b'@@series-last {"read":9,"size":9,"last_loss":NaN,"progress":[1]}\nx')
    assert nan is not None and nan.last_loss is None and nan.progress is None


def test_the_whole_log_fills_in_only_where_the_end_read_is_not_the_whole_log() -> None:
    log = HEAD + steps(1, 501) + NOISE
    window = len(NOISE)  # the end read holds neither a loss nor a progress
    last, _ = split_last(whole(log))
    end = summarize(log[-window:], from_start=False)
    facts = JobFacts(id="j", log_bytes=len(log), pid=1, alive=True)
    info = info_with_summary(facts, end, last, window=window)
    assert info.last_loss == 0.002 and info.progress_percent == 50.0 and info.progress_counts == (None, 2, 500, 1000)
    # the end read is the whole log: it is what the log says, and series.last (behind) is not asked
    short = HEAD + steps(1, 11)
    stale, _ = split_last(whole(HEAD + steps(1, 4)))
    info = info_with_summary(
        JobFacts(id="j", log_bytes=len(short)), summarize(short, from_start=True), stale, window=len(short)
    )
    assert info.last_loss == 0.1 and info.progress_counts == (None, 2, 10, 1000)


def test_what_the_end_says_now_wins_and_a_summariser_far_behind_does_not_replace_it() -> None:
    log = HEAD + steps(1, 501) + NOISE + steps(501, 511)
    window = len(NOISE) + len(steps(501, 511))
    end = summarize(log[-window:], from_start=False)
    assert end.last_loss is not None and end.progress is not None and end.progress.percent is None
    facts = JobFacts(id="j", log_bytes=len(log), pid=1, alive=True)
    behind, _ = split_last(whole(HEAD + steps(1, 101)))  # read 2 KB of a 30 KB log
    info = info_with_summary(facts, end, behind, window=window)
    assert info.last_loss == end.last_loss and info.progress_counts[2] == 510
    assert info.progress_counts[1] is None  # the end does not say how many epochs, and `behind` is too far back
    caught_up, _ = split_last(whole(log))
    info = info_with_summary(facts, end, caught_up, window=window)
    assert info.last_loss == end.last_loss
    assert info.progress_percent == 51.0 and info.progress_counts == (None, 2, 510, 1000)
