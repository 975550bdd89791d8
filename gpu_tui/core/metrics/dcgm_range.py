"""One lab node's recent past, for the detail screen (issue 26): its GPUs' utilisation and VRAM
over the last hour from Prometheus's `query_range`, asked only for the node on screen (two
queries, whatever the size of the lab).

The node is picked as core/metrics/dcgm names it: its `Hostname` label, else its scrape
target's host. A label value is remote text: it is quoted for PromQL (and escaped as a regex
for the target), never pasted in raw. A NaN sample, or a step with no sample, is None.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from gpu_tui.core.metrics.dcgm import METRICS, prom_result, selector_inner

__all__ = ["Matrix", "NodeHistory", "history_from", "history_queries", "matrix", "promql_string"]

HISTORY_METRICS = ("util", "fb_used")
Matrix = list[tuple[dict[str, str], list[tuple[float, float | None]]]]
"""A range query's answer: (labels, [(time, value or None)]) per series."""


@dataclass(frozen=True, slots=True)
class NodeHistory:
    """The node's GPUs at `start`, `start + step`, ... `end` (epoch seconds)."""

    start: float
    step: float
    end: float
    utilization: dict[int, list[float | None]] = field(default_factory=dict)
    """{GPU index: % per step}."""
    memory_used_mib: dict[int, list[float | None]] = field(default_factory=dict)

    @property
    def points(self) -> int:
        return int(round((self.end - self.start) / self.step)) + 1 if self.step > 0 else 0


def promql_string(value: str) -> str:
    """`value` as a double-quoted PromQL string literal."""
    return json.dumps(value)  # PromQL's string escapes are Go's, which JSON's are a subset of


def _selector(node: str, match: str, by_target: bool) -> str:
    inner = selector_inner(match)
    # `Hostname=""` matches a series without the label: an exporter that names no host
    picked = (
        f'Hostname="", instance=~{promql_string(re.escape(node) + "(:[0-9]+)?")}'
        if by_target
        else f"Hostname={promql_string(node)}"
    )
    return "{" + ", ".join(p for p in (inner, picked) if p) + "}"


def history_queries(node: str, match: str = "") -> dict[str, str]:
    """{metric key: PromQL} for one node's history: by its Hostname, or, for an exporter that
    sets none, by its target's host."""
    out = {}
    for key in HISTORY_METRICS:
        name = METRICS[key]
        by_host = f"max by (gpu) ({name}{_selector(node, match, False)})"
        by_target = f"max by (gpu) ({name}{_selector(node, match, True)})"
        out[key] = f"{by_host} or {by_target}"
    return out


def matrix(body: bytes) -> Matrix:
    """A range query's answer (`/api/v1/query_range`) as (labels, [(time, value)]); a NaN or an
    unreadable value is None. PromAnswerError for an error answer or one that is not a matrix."""
    out: Matrix = []
    for item in prom_result(body, "matrix", "a range vector"):
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
            continue
        labels = {str(k): str(v) for k, v in item["metric"].items()}
        samples: list[tuple[float, float | None]] = []
        for pair in item.get("values") or ():
            if not (isinstance(pair, list) and len(pair) == 2):
                continue
            try:
                at, value = float(pair[0]), float(pair[1])
            except (TypeError, ValueError):
                continue
            samples.append((at, value if math.isfinite(value) else None))
        out.append((labels, samples))
    return out


def history_from(
    answers: dict[str, Matrix],
    start: float,
    end: float,
    step: float,
) -> NodeHistory:
    """The answers laid on the step grid from `start` to `end`: a step Prometheus had no sample
    for (the node was down, not yet scraped) is None."""
    history = NodeHistory(start, step, end)
    n = history.points
    for key, into in (("util", history.utilization), ("fb_used", history.memory_used_mib)):
        for labels, samples in answers.get(key, []):
            gpu = labels.get("gpu", "")
            if not gpu.isdigit():
                continue
            row: list[float | None] = [None] * n
            for at, value in samples:
                i = int(round((at - start) / step))
                if 0 <= i < n:
                    row[i] = value
            into[int(gpu)] = row
    return history
