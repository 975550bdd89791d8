"""core/trainlog/overview: the bounded overview the summariser keeps of a series file (the log
screen's first paint of a run it has no copy of)."""

from __future__ import annotations

import json
import math
import pickle
import random

from gpu_tui.core.trainlog.overview import BUCKETS, TAIL, SeriesOverview
from gpu_tui.core.trainlog.series_decode import decode_series


def _kept(overview: SeriesOverview) -> dict[str, list[tuple[float, float]]]:
    out: dict[str, list[tuple[float, float]]] = {}
    for row in overview.rows():
        out.setdefault(str(row[0]), []).append((float(row[1]), float(row[2])))  # type: ignore[arg-type]
    return out


def test_a_million_points_keep_their_shape_in_a_few_thousand() -> None:
    rng = random.Random(7)
    overview = SeriesOverview()
    values = [2.5 * math.exp(-i / 200_000) + rng.random() * 0.05 for i in range(1_000_000)]
    values[123_456] = 9.0  # a spike
    values[654_321] = -1.0  # a dip
    for i, v in enumerate(values):
        overview.add_log_point("loss", i, v, None)
    kept = _kept(overview)["loss"]
    assert len(kept) <= 4 * BUCKETS + TAIL
    xs = [x for x, _v in kept]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)  # in order, each point once
    assert (123_456, 9.0) in kept and (654_321, -1.0) in kept
    assert kept[-TAIL:] == [(float(i), values[i]) for i in range(1_000_000 - TAIL, 1_000_000)]
    # every stretch of the run is there: no gap wider than a bucket
    assert max(b - a for a, b in zip(xs, xs[1:], strict=False)) <= 2 * 1_000_000 / BUCKETS


def test_a_short_series_is_kept_whole() -> None:
    overview = SeriesOverview()
    for i in range(TAIL):
        overview.add_log_point("lr", i, 1e-4 * i, 1000.0 + i)
    assert list(overview.rows()) == [["lr", i, 1e-4 * i, 1000.0 + i] for i in range(TAIL)]


def test_run_file_rows_keep_their_stream_and_file_and_a_reset_drops_a_stream() -> None:
    overview = SeriesOverview()
    overview.add_log_point("loss", 1, 2.0, None)
    overview.add_row(["train/loss", 10, 1.5, 99.0, "tensorboard", "/w/runs/a/events.out.tfevents.1.h.2.0"])
    overview.add_row(["eval_loss", 10, 1.7, None, "trainer_state"])
    overview.add_row(["loss", 2, 1.9, None])
    rows = list(overview.rows())
    assert rows == [
        ["loss", 1, 2.0, None],
        ["loss", 2, 1.9, None],
        ["train/loss", 10, 1.5, 99.0, "tensorboard", "/w/runs/a/events.out.tfevents.1.h.2.0"],
        ["eval_loss", 10, 1.7, None, "trainer_state"],
    ]
    # the client reads them as it reads the series file
    text = "".join(json.dumps(r) + "\n" for r in rows)
    assert set(decode_series(text)) == {("log", "loss"), ("tensorboard", "train/loss"), ("trainer_state", "eval_loss")}
    overview.add_row({"reset": "trainer_state"})
    overview.add_row(["bogus"])  # a row of no known form: left out
    assert [r for r in overview.rows() if len(r) == 5] == []
    assert len(overview) == 2


def test_a_nan_is_never_kept_over_a_number() -> None:
    overview = SeriesOverview()
    overview.add_log_point("grad_norm", 0, math.nan, None)
    for i in range(1, 10 * TAIL):
        overview.add_log_point("grad_norm", i, float(i % 97), None)
    kept = [v for _x, v in _kept(overview)["grad_norm"]]
    assert min(kept[:-TAIL]) == 0.0 and max(kept[:-TAIL]) == 96.0


def test_an_overview_saved_and_taken_up_goes_on_as_one_that_never_stopped() -> None:
    one, two = SeriesOverview(), SeriesOverview()
    for i in range(50_000):
        one.add_log_point("loss", i, math.sin(i / 500), None)
        two.add_log_point("loss", i, math.sin(i / 500), None)
        if i == 20_000:
            two = pickle.loads(pickle.dumps(two))
    assert list(one.rows()) == list(two.rows())
