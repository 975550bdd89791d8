"""core/metrics/dcgm_range: a lab node's history queries (remote names quoted, never pasted) and
range answers laid on the step grid: NaN and missing steps are None, an error answer is one
PromAnswerError. The real Prometheus answering them is tests/integration/test_prometheus.py."""

from __future__ import annotations

import json

import pytest

from gpu_tui.core.metrics.dcgm import PromAnswerError
from gpu_tui.core.metrics.dcgm_range import history_from, history_queries, matrix, promql_string


def answer(result: list[dict[str, object]], kind: str = "matrix") -> bytes:
    return json.dumps({"status": "success", "data": {"resultType": kind, "result": result}}).encode()


def test_queries_pick_the_node_by_hostname_or_target_and_carry_the_selector() -> None:
    q = history_queries("dgx-01", '{cluster="a"}')
    assert set(q) == {"util", "fb_used"}
    assert q["util"] == (
        'max by (gpu) (DCGM_FI_DEV_GPU_UTIL{cluster="a", Hostname="dgx-01"}) or '
        'max by (gpu) (DCGM_FI_DEV_GPU_UTIL{cluster="a", Hostname="", instance=~"dgx\\\\-01(:[0-9]+)?"})'
    )
    assert "{Hostname=" in history_queries("n")["fb_used"]


def test_a_name_is_quoted_not_pasted() -> None:
    assert promql_string('a"} or up{x="') == '"a\\"} or up{x=\\""'
    q = history_queries('a"} or vector(1) #')["util"]
    assert 'Hostname="a\\"} or vector(1) #"' in q


def test_a_matrix_on_the_grid_nan_and_gaps_are_none() -> None:
    body = answer(
        [
            {"metric": {"gpu": "0"}, "values": [[100, "5"], [102, "NaN"], [103, "7.5"]]},
            {"metric": {"gpu": "1"}, "values": [[101, "9"], ["x", "1"], [999, "3"]]},
            {"metric": {"gpu": "odd"}, "values": [[100, "1"]]},
        ]
    )
    rows = matrix(body)
    assert rows[0] == ({"gpu": "0"}, [(100.0, 5.0), (102.0, None), (103.0, 7.5)])
    got = history_from({"util": rows, "fb_used": rows[:1]}, 100.0, 103.0, 1.0)
    assert got.points == 4
    assert got.utilization == {0: [5.0, None, None, 7.5], 1: [None, 9.0, None, None]}  # 999 is past the end
    assert got.memory_used_mib == {0: [5.0, None, None, 7.5]}


def test_an_error_answer_or_another_shape_is_one_error() -> None:
    with pytest.raises(PromAnswerError, match="bad_data: invalid parameter"):
        matrix(b'{"status":"error","errorType":"bad_data","error":"invalid parameter \\"step\\""}')
    with pytest.raises(PromAnswerError, match="not a range vector"):
        matrix(answer([], kind="vector"))
    with pytest.raises(PromAnswerError, match="not JSON"):
        matrix(b"<html>proxy error</html>")
