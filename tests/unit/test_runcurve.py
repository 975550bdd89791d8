"""ui/runcurve.py: a run's series thinned to the chart's width, zoomed, on the x the user picks,
with a legend that names the last value and the minimum."""

from __future__ import annotations

import math

from rich.cells import cell_len

from gpu_tui.ui.runcurve import Plot, axes_of, curve_of, curves_of, draw, thin, zoom_levels
from gpu_tui.ui.runseries import SeriesRead
from gpu_tui.ui.screens.job_log_text import run_note

LOSS = [(s, 2.0 / (1 + s / 100) + (0.5 if s == 3000 else 0.0), 1000.0 + 4 * s) for s in range(0, 5000, 5)]
EVAL = [(s, 2.2 / (1 + s / 100), None) for s in range(0, 5000, 500)]


def curves():
    return curves_of(
        [("loss", LOSS), ("eval_loss", EVAL), ("lr", [(s, 1e-3, None) for s in range(10)]), ("one", [(0, 1.0, None)])]
    )


def test_thinning_keeps_each_groups_extremes_in_order() -> None:
    pts = [(float(i), math.sin(i / 10), None) for i in range(100_000)]
    kept = thin(pts, 100)
    assert len(kept) <= 200
    assert [p[0] for p in kept] == sorted(p[0] for p in kept)
    assert max(p[1] for p in kept) == max(p[1] for p in pts)
    assert min(p[1] for p in kept) == min(p[1] for p in pts)
    spike = [(float(i), 1.0 if i == 7777 else 0.0, None) for i in range(100_000)]
    assert (7777.0, 1.0, None) in thin(spike, 50)  # one point in 100k still drawn
    assert thin(pts[:10], 100) == pts[:10]


def test_series_of_one_point_are_left_out_and_axes_follow_the_points() -> None:
    got = curves()
    assert set(got) == {"loss", "eval_loss", "lr"}
    assert got["loss"].axis == "step" and axes_of(got["loss"]) == ["step", "time"]
    assert axes_of(got["eval_loss"]) == ["step"]  # no times on its lines
    epochs = curves_of([("loss", [(0.5, 1.0, None), (1.25, 0.5, None)])])
    assert epochs["loss"].axis == "epoch"
    assert zoom_levels(got["loss"], "step") == [1000, 100]
    assert zoom_levels(got["lr"], "step") == []  # 9 steps: the last 100 is the whole run
    assert zoom_levels(got["loss"], "time") == [0.1, 0.01]


def test_the_legend_has_the_last_value_the_minimum_and_eval_loss_beside_loss() -> None:
    out = draw(curves(), Plot(), width=100, height=10).plain
    legend = out.split("\n")[-1]
    assert "━ loss 0.03925" in legend and "━ eval_loss 0.04783" in legend
    assert "▼ min 0.03925 @ step 4,995" in legend
    assert "▼" in "".join(out.split("\n")[:-1])  # the minimum marked on the curve
    lr = draw(curves(), Plot(tag="lr"), width=100, height=10).plain
    assert "eval_loss" not in lr and "━ lr 0.001" in lr


def test_zoom_axis_and_scale_change_what_is_drawn() -> None:
    c = curves()
    whole = draw(c, Plot(), width=100, height=10).plain
    zoomed = draw(c, Plot(zoom=1000), width=100, height=10).plain
    assert zoomed != whole and "3995" in zoomed and "3995" not in whole  # the x ticks start there
    timed = draw(c, Plot(axis="time"), width=100, height=10).plain
    assert "hours since the first point" in timed and "eval_loss" not in timed.split("\n")[-1]
    assert "@ 5.5 h" in timed.split("\n")[-1]  # the last point: 4 s a step from the first
    logged = draw(c, Plot(log=True), width=100, height=10).plain
    assert "log10(loss)" in logged and "▼ min 0.03" in logged.split("\n")[-1]  # values, not their logs


def test_a_compared_curve_is_named_in_the_legend_and_the_legend_fits_the_width() -> None:
    c = curves()
    other = curves_of([("loss", [(s, 3.0 / (1 + s / 50), None) for s in range(0, 4000, 10)])])["loss"]
    out = draw(c, Plot(compare="llama-ft (box-2)"), width=200, height=10, compare=other).plain
    assert "━ llama-ft (box-2) 0.03" in out.split("\n")[-1]
    narrow = draw(c, Plot(compare="llama-ft (box-2)"), width=60, height=10, compare=other)
    assert all(cell_len(line) <= 60 for line in narrow.plain.split("\n"))


def test_the_note_under_the_chart_says_what_the_curve_covers() -> None:
    curve = curve_of("loss", [(i, 1.0 / (i + 1), None) for i in range(5)])
    thin = SeriesRead("box", "j", {"loss": curve}, False, 0.2, thin=True)
    whole = SeriesRead("box", "j", {"loss": curve}, False, 1.5)
    assert run_note(None, 3.4, None, None, None) == "reading the whole run… (3 s)"
    assert run_note(thin, 2.0, None, curve, None) == "whole run, thinned on the instance; reading every point… (2 s)"
    assert run_note(whole, None, None, curve, "last 10 %") == "whole run: 5 points  · zoom: last 10 %"
    assert run_note(whole, None, "link lost", curve, None) == "the whole run could not be read: link lost"
