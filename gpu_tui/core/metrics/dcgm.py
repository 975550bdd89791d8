"""A lab's GPUs as its Prometheus holds them (issue 26): NVIDIA dcgm-exporter's series, read with
one instant query per metric for every node, turned into what an instance's nvidia-smi gives.

dcgm-exporter's documented names (its default-counters.csv): `DCGM_FI_DEV_GPU_UTIL` (%),
`DCGM_FI_DEV_FB_USED` / `DCGM_FI_DEV_FB_FREE` (MiB; the card's total is their sum),
`DCGM_FI_DEV_POWER_USAGE` (W), `DCGM_FI_DEV_GPU_TEMP` (°C), `DCGM_FI_DEV_XID_ERRORS` (the last
Xid, 0 for none); labels `gpu` (the index), `UUID`, `modelName`, `Hostname` (the node),
`device`, and on Kubernetes `pod` / `namespace` (`pod_name` / `pod_namespace` under its
`--use-old-namespace`): the pod each GPU is allotted to, read from the utilisation series.
`up` is Prometheus's own: 0 is an exporter it could not scrape; only the `up` of a dcgm-exporter
counts (a lab's Prometheus scrapes many other jobs), known by its target having exported GPU
series in the last hour or by its scrape job.
node_exporter's load, memory, CPUs and boot time (core/metrics/nodeexporter) join a node by its
`nodename`, else by its target's host.

A sample that is NaN or not a number is "not available" (None), never 0. A node is named by its
`Hostname` label, else its scrape target (`instance` without the port).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from gpu_tui.core.metrics.nodeexporter import NODE_QUERIES, NodeHost, node_hosts
from gpu_tui.core.models import GpuSample

__all__ = [
    "METRICS",
    "NodeReading",
    "PromAnswerError",
    "fleet",
    "node_of",
    "prom_result",
    "queries",
    "selector_inner",
    "vector",
]

METRICS = {
    "util": "DCGM_FI_DEV_GPU_UTIL",
    "fb_used": "DCGM_FI_DEV_FB_USED",
    "fb_free": "DCGM_FI_DEV_FB_FREE",
    "power": "DCGM_FI_DEV_POWER_USAGE",
    "temp": "DCGM_FI_DEV_GPU_TEMP",
    "xid": "DCGM_FI_DEV_XID_ERRORS",
}
"""What is asked, one instant query each for every node at once."""


class PromAnswerError(ValueError):
    """Prometheus answered something other than a vector: its own error words, or garbage."""


@dataclass(frozen=True, slots=True)
class NodeReading:
    """One node at one refresh: its GPUs, whether its exporter was scraped, and its Xids."""

    name: str
    gpus: tuple[GpuSample, ...] = ()
    up: bool | None = None
    """Prometheus's `up` for the node's exporter: False where the last scrape failed; None unknown."""
    xids: Mapping[int, int] = field(default_factory=dict)
    """{GPU index: the last Xid} for GPUs whose last Xid is not 0."""
    host: NodeHost | None = None
    """What node_exporter says of the node; None where it exports nothing."""
    pods: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    """{GPU index: the Kubernetes pods it is allotted to, `namespace/pod`} where dcgm-exporter says."""


_KEEP = "Hostname, instance, gpu, UUID, modelName"
_POD_LABELS = (("namespace", "pod"), ("pod_namespace", "pod_name"))
"""dcgm-exporter's Kubernetes labels, then those of its --use-old-namespace."""


def selector_inner(match: str) -> str:
    """A label selector such as `{cluster="a"}` without its braces (which are optional)."""
    inner = match.strip()
    if inner.startswith("{") and inner.endswith("}"):
        inner = inner[1:-1].strip()
    return inner


def queries(match: str = "") -> dict[str, str]:
    """{key: PromQL} of one refresh; `match` a label selector such as `{cluster="a"}` (braces
    optional), applied to every metric and to `up`."""
    inner = selector_inner(match)
    sel = "{" + inner + "}" if inner else ""
    # only the labels read here come back (a series of dcgm-exporter carries ten or more)
    out = {key: f"max by ({_KEEP}) ({name}{sel})" for key, name in METRICS.items()}
    pods = ", ".join(label for pair in _POD_LABELS for label in pair)
    out["util"] = f"max by ({_KEEP}, {pods}) ({METRICS['util']}{sel})"  # a GPU's pod, once
    out["up"] = "up" + sel
    # which exporter (`instance`) is which node, over the last hour: a node whose exporter went
    # down keeps its name (its series are gone from an instant query the moment a scrape fails)
    out["names"] = f"group by (instance, Hostname, job) (last_over_time({METRICS['util']}{sel}[1h]))"
    for key, expr in NODE_QUERIES.items():
        out[key] = expr.format(sel=sel, inner=inner + "," if inner else "")
    return out


def prom_result(body: bytes, result_type: str, what: str) -> list[object]:
    """The `data.result` list of a Prometheus HTTP API answer of `result_type` (`vector`,
    `matrix`); PromAnswerError for an error answer, or one that is not JSON or not `what`."""
    try:
        doc = json.loads(body)
    except ValueError as exc:
        raise PromAnswerError(f"not JSON: {body[:80]!r}") from exc
    if not isinstance(doc, dict):
        raise PromAnswerError("not a JSON object")
    if doc.get("status") != "success":
        raise PromAnswerError(f"{doc.get('errorType') or 'error'}: {doc.get('error') or 'no reason given'}")
    data = doc.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("resultType") != result_type or not isinstance(result, list):
        raise PromAnswerError(f"the answer is not {what}")
    return result


def vector(body: bytes) -> list[tuple[dict[str, str], float | None]]:
    """An instant query's answer (`/api/v1/query`) as (labels, value); a NaN or an unreadable
    value is None. PromAnswerError for an error answer or one that is not a vector."""
    out: list[tuple[dict[str, str], float | None]] = []
    for item in prom_result(body, "vector", "an instant vector"):
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict):
            continue
        labels = {str(k): str(v) for k, v in item["metric"].items()}
        pair = item.get("value")
        value: float | None = None
        if isinstance(pair, list) and len(pair) == 2:
            try:
                value = float(pair[1])
            except (TypeError, ValueError):
                value = None
        out.append((labels, value if value is not None and math.isfinite(value) else None))
    return out


def node_of(labels: Mapping[str, str]) -> str | None:
    """The node a series is of: its `Hostname`, else its target's host."""
    host = labels.get("Hostname") or labels.get("instance")
    if not host:
        return None
    if "Hostname" not in labels and host.rsplit(":", 1)[-1].isdigit():
        host = host.rsplit(":", 1)[0]
    return host


def _num(row: Mapping[str, object], key: str) -> float | None:
    value = row.get(key)
    return value if isinstance(value, float) else None


def _int(value: float | None) -> int | None:
    return None if value is None else round(value)


def fleet(answers: Mapping[str, list[tuple[dict[str, str], float | None]]]) -> dict[str, NodeReading]:
    """{node: its reading} from one refresh's answers ({key of `queries`: vector}). `up` names
    only the exporter (`instance`): the `names` answer and the GPU series say which node it is."""
    host_of: dict[str, str] = {}
    jobs: set[str] = set()
    for key in ("names", *METRICS):
        for labels, _value in answers.get(key, []):
            node, instance = node_of(labels), labels.get("instance")
            if node is not None and instance:
                host_of[instance] = node
            if labels.get("job"):
                jobs.add(labels["job"])
    per_gpu: dict[tuple[str, int], dict[str, object]] = {}
    pods: dict[str, dict[int, set[str]]] = {}
    for key in METRICS:
        for labels, value in answers.get(key, []):
            node, gpu = node_of(labels), labels.get("gpu", "")
            if node is None or not gpu.isdigit():
                continue
            row = per_gpu.setdefault((node, int(gpu)), {"uuid": labels.get("UUID"), "name": labels.get("modelName")})
            row[key] = value
            pod = _pod(labels) if key == "util" else None
            if pod is not None:
                pods.setdefault(node, {}).setdefault(int(gpu), set()).add(pod)
    ups: dict[str, bool] = {}
    for labels, value in answers.get("up", []):
        instance = labels.get("instance", "")
        if instance not in host_of and labels.get("job") not in jobs:
            continue  # node_exporter, Prometheus itself, anything else the lab scrapes
        node = host_of.get(instance) or node_of(labels)
        if node is not None and value is not None:
            ups[node] = ups.get(node, False) or value >= 1
    nodes: dict[str, list[GpuSample]] = {}
    xids: dict[str, dict[int, int]] = {}
    for (node, index), row in sorted(per_gpu.items()):
        used, free = _num(row, "fb_used"), _num(row, "fb_free")
        uuid, name = row.get("uuid"), row.get("name")
        nodes.setdefault(node, []).append(
            GpuSample(
                index=index,
                uuid=uuid if isinstance(uuid, str) else None,
                name=name if isinstance(name, str) else None,
                utilization_gpu=_int(_num(row, "util")),
                memory_used_mib=_int(used),
                memory_total_mib=_int(used + free) if used is not None and free is not None else None,
                temperature_c=_int(_num(row, "temp")),
                power_draw_w=_num(row, "power"),
            )
        )
        xid = _num(row, "xid")
        if xid is not None and xid > 0:
            xids.setdefault(node, {})[index] = round(xid)
    names = sorted(set(nodes) | set(ups))
    by_host: dict[str, set[str]] = {}
    for instance, node in host_of.items():
        by_host.setdefault(instance.rsplit(":", 1)[0], set()).add(node)
    # a host that runs several nodes' exporters (a test bench, a proxy) says nothing of which one
    single = {host: next(iter(found)) for host, found in by_host.items() if len(found) == 1}
    hosts = node_hosts(answers, single, set(host_of.values()))
    return {
        n: NodeReading(
            n,
            tuple(nodes.get(n, ())),
            ups.get(n),
            xids.get(n, {}),
            hosts.get(n),
            {gpu: tuple(sorted(held)) for gpu, held in sorted(pods.get(n, {}).items())},
        )
        for n in names
    }


def _pod(labels: Mapping[str, str]) -> str | None:
    """`namespace/pod` of a series that names its pod, else None."""
    for ns_label, pod_label in _POD_LABELS:
        pod = labels.get(pod_label)
        if pod:
            ns = labels.get(ns_label)
            return f"{ns}/{pod}" if ns else pod
    return None
