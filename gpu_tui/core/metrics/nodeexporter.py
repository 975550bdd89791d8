"""A lab node's host figures from node_exporter's documented series, through the same Prometheus
as its GPUs (core/metrics/dcgm): load, memory, CPUs and how long it has been up.

node_exporter names its series by scrape target (`instance`, host:9100), not by the node's
name: `node_uname_info`'s `nodename` says which node a target is; where it names no node of the
fleet, the target's host is matched with the dcgm-exporter's (the same machine, another port).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["NODE_QUERIES", "NodeHost", "node_hosts"]

NODE_QUERIES = {
    "n_load": "max by (instance) (node_load1{sel})",
    "n_mem_total": "max by (instance) (node_memory_MemTotal_bytes{sel})",
    "n_mem_avail": "max by (instance) (node_memory_MemAvailable_bytes{sel})",
    "n_uptime": "max by (instance) (time() - node_boot_time_seconds{sel})",
    "n_cpus": 'count by (instance) (node_cpu_seconds_total{{{inner}mode="idle"}})',
    "n_busy": 'clamp(100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{{{inner}mode="idle"}}[1m]))), 0, 100)',
    "n_name": "max by (instance, nodename) (node_uname_info{sel})",
}
"""{key: PromQL with `{sel}` (the fleet's selector) and `{inner}` (its labels, then a comma)}."""

_MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class NodeHost:
    load1: float | None = None
    cpu_count: int | None = None
    cpu_percent: float | None = None
    """Busy share of all CPUs over the last minute, 0-100."""
    mem_used_mib: int | None = None
    """MemTotal - MemAvailable."""
    mem_total_mib: int | None = None
    uptime_seconds: int | None = None


Answers = Mapping[str, list[tuple[dict[str, str], float | None]]]


def _by_instance(answers: Answers, key: str) -> dict[str, float]:
    return {labels["instance"]: v for labels, v in answers.get(key, []) if v is not None and labels.get("instance")}


def node_hosts(answers: Answers, node_by_host: Mapping[str, str], known: set[str]) -> dict[str, NodeHost]:
    """{node: its host figures}; `known`: the fleet's nodes; `node_by_host`: a dcgm-exporter
    target's host -> its node, where that host is one node's."""
    named = {
        labels["instance"]: labels.get("nodename", "")
        for labels, _v in answers.get("n_name", [])
        if "instance" in labels
    }
    load, total, avail = (_by_instance(answers, k) for k in ("n_load", "n_mem_total", "n_mem_avail"))
    uptime, cpus, busy = (_by_instance(answers, k) for k in ("n_uptime", "n_cpus", "n_busy"))
    out: dict[str, NodeHost] = {}
    for instance in set(load) | set(total) | set(uptime) | set(cpus):
        nodename = named.get(instance, "")
        node = nodename if nodename in known else node_by_host.get(instance.rsplit(":", 1)[0])
        if node is None or node in out:
            continue
        t, a = total.get(instance), avail.get(instance)
        out[node] = NodeHost(
            load1=load.get(instance),
            cpu_count=round(cpus[instance]) if instance in cpus else None,
            cpu_percent=busy.get(instance),
            mem_used_mib=round((t - a) / _MIB) if t is not None and a is not None else None,
            mem_total_mib=round(t / _MIB) if t is not None else None,
            uptime_seconds=round(uptime[instance]) if instance in uptime else None,
        )
    return out
