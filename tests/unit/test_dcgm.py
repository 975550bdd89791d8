"""core/metrics/dcgm: Prometheus's instant-query answers (as its HTTP API documents them) read as
nodes and GPUs; the real Prometheus is tests/integration/test_prometheus.py's."""

from __future__ import annotations

import json

import pytest

from gpu_tui.core.metrics.dcgm import PromAnswerError, fleet, node_of, queries, vector


def answer(*series: tuple[dict[str, str], str]) -> bytes:
    result = [{"metric": m, "value": [1733140000.123, v]} for m, v in series]
    return json.dumps({"status": "success", "data": {"resultType": "vector", "result": result}}).encode()


def test_one_query_per_metric_with_the_selector() -> None:
    q = queries('{cluster="a"}')
    keep = "Hostname, instance, gpu, UUID, modelName"
    pods = "namespace, pod, pod_namespace, pod_name"
    assert q["util"] == f'max by ({keep}, {pods}) (DCGM_FI_DEV_GPU_UTIL{{cluster="a"}})'
    assert q["up"] == 'up{cluster="a"}'
    assert queries('cluster="a"') == q and queries()["fb_used"] == f"max by ({keep}) (DCGM_FI_DEV_FB_USED)"
    assert 'last_over_time(DCGM_FI_DEV_GPU_UTIL{cluster="a"}[1h])' in q["names"]


def test_nan_and_garbage_values_are_not_readings() -> None:
    rows = vector(answer(({"gpu": "0"}, "NaN"), ({"gpu": "1"}, "+Inf"), ({"gpu": "2"}, "x"), ({"gpu": "3"}, "7")))
    assert [v for _, v in rows] == [None, None, None, 7.0]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'{"status":"error","errorType":"bad_data","error":"parse error at char 9"}', "bad_data: parse error"),
        (b"<html>proxy</html>", "not JSON"),
        (b'{"status":"success","data":{"resultType":"matrix","result":[]}}', "not an instant vector"),
    ],
)
def test_an_answer_that_is_no_vector_says_why(body: bytes, words: str) -> None:
    with pytest.raises(PromAnswerError, match=words):
        vector(body)


def test_nodes_by_hostname_and_an_exporter_down_by_its_instance() -> None:
    a = {"Hostname": "node-a", "instance": "10.0.0.1:9400", "gpu": "0", "UUID": "GPU-1", "modelName": "H100"}
    b = {"Hostname": "node-b", "instance": "10.0.0.2:9400"}
    answers = {
        "util": vector(answer((a, "97"))),
        "fb_used": vector(answer((a, "70000"))),
        "fb_free": vector(answer((a, "11559"))),
        "xid": vector(answer((a, "79"))),
        "names": vector(answer((a, "1"), (b, "1"))),
        "up": vector(answer(({"instance": "10.0.0.1:9400"}, "1"), ({"instance": "10.0.0.2:9400"}, "0"))),
    }
    nodes = fleet(answers)
    assert sorted(nodes) == ["node-a", "node-b"]
    gpu = nodes["node-a"].gpus[0]
    assert (gpu.utilization_gpu, gpu.memory_used_mib, gpu.memory_total_mib, gpu.power_draw_w) == (
        97,
        70000,
        81559,
        None,
    )
    assert nodes["node-a"].up is True and nodes["node-a"].xids == {0: 79}
    assert nodes["node-b"].up is False and nodes["node-b"].gpus == ()


def test_a_node_without_a_hostname_is_its_target_host() -> None:
    assert node_of({"instance": "gpu-07:9400"}) == "gpu-07"
    assert node_of({"Hostname": "n1", "instance": "x:1"}) == "n1" and node_of({}) is None


def test_an_xid_is_the_fault_it_is_in_both_languages() -> None:
    from gpu_tui.config.language import catalog
    from gpu_tui.core import i18n
    from gpu_tui.core.metrics.xid import XID_WORDS, xid_text

    assert xid_text(79) == "Xid 79: the GPU has fallen off the bus: reset it or reboot the node"
    assert xid_text(7) == "Xid 7"  # not in NVIDIA's table as gpu-tui keeps it: the number alone
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        assert xid_text(79) == "Xid 79: GPU 已从总线掉线: 重置它或重启节点"
        assert all(i18n._(words) != words for words in XID_WORDS.values())


def test_only_the_dcgm_exporters_up_counts() -> None:
    """A lab's Prometheus scrapes node_exporter, itself and more: their `up` is not a GPU node.
    An exporter of the dcgm job that never exported a series still is one (its target named)."""
    a = {"Hostname": "node-a", "instance": "10.0.0.1:9400", "job": "dcgm", "gpu": "0"}
    answers = {
        "util": vector(answer((a, "5"))),
        "names": vector(answer((a, "1"))),
        "up": vector(
            answer(
                ({"instance": "10.0.0.1:9400", "job": "dcgm"}, "1"),
                ({"instance": "10.0.0.9:9400", "job": "dcgm"}, "0"),
                ({"instance": "10.0.0.1:9100", "job": "node"}, "1"),
                ({"instance": "localhost:9090", "job": "prometheus"}, "1"),
            )
        ),
    }
    nodes = fleet(answers)
    assert sorted(nodes) == ["10.0.0.9", "node-a"] and nodes["10.0.0.9"].up is False


def test_node_exporter_joins_by_nodename_else_by_its_hosts_one_node() -> None:
    a = {"Hostname": "node-a", "instance": "10.0.0.1:9400", "gpu": "0"}
    b = {"Hostname": "node-b", "instance": "10.0.0.2:9400", "gpu": "0"}
    gib = 2**30
    answers = {
        "util": vector(answer((a, "5"), (b, "7"))),
        "n_name": vector(answer(({"instance": "10.0.0.1:9100", "nodename": "node-a"}, "1"))),
        "n_load": vector(answer(({"instance": "10.0.0.1:9100"}, "2.5"), ({"instance": "10.0.0.2:9100"}, "0.5"))),
        "n_mem_total": vector(answer(({"instance": "10.0.0.1:9100"}, str(64 * gib)))),
        "n_mem_avail": vector(answer(({"instance": "10.0.0.1:9100"}, str(48 * gib)))),
        "n_uptime": vector(answer(({"instance": "10.0.0.1:9100"}, "3600.4"))),
        "n_cpus": vector(answer(({"instance": "10.0.0.1:9100"}, "32"))),
        "n_busy": vector(answer(({"instance": "10.0.0.1:9100"}, "NaN"))),
    }
    nodes = fleet(answers)
    h = nodes["node-a"].host
    assert h is not None and (h.load1, h.cpu_count, h.cpu_percent, h.mem_used_mib, h.mem_total_mib) == (
        2.5,
        32,
        None,  # NaN: not a reading
        16 * 1024,
        64 * 1024,
    )
    assert h.uptime_seconds == 3600
    hb = nodes["node-b"].host  # no nodename: the target's host is node-b's dcgm-exporter's
    assert hb is not None and hb.load1 == 0.5 and hb.mem_total_mib is None


def test_a_host_with_several_nodes_exporters_names_none_of_them() -> None:
    a = {"Hostname": "node-a", "instance": "127.0.0.1:9400", "gpu": "0"}
    b = {"Hostname": "node-b", "instance": "127.0.0.1:9401", "gpu": "0"}
    answers = {
        "util": vector(answer((a, "5"), (b, "7"))),
        "n_load": vector(answer(({"instance": "127.0.0.1:9100"}, "2.5"))),
    }
    assert all(n.host is None for n in fleet(answers).values())


def test_node_exporter_queries_carry_the_selector() -> None:
    q = queries('{cluster="a"}')
    assert q["n_load"] == 'max by (instance) (node_load1{cluster="a"})'
    assert 'node_cpu_seconds_total{cluster="a",mode="idle"}[1m]' in q["n_busy"]
    assert queries()["n_cpus"] == 'count by (instance) (node_cpu_seconds_total{mode="idle"})'


def test_a_gpus_kubernetes_pod_from_either_label_set() -> None:
    """dcgm-exporter names the pod a GPU is allotted to (`pod`/`namespace`, or `pod_name`/
    `pod_namespace` under --use-old-namespace); a GPU no pod holds has none, and two pods
    sharing one GPU (time-slicing) are both named, while the GPU's reading stays one."""
    base = {"Hostname": "n1", "instance": "10.0.0.1:9400", "UUID": "GPU-1", "modelName": "H100"}
    util = vector(
        answer(
            ({**base, "gpu": "0", "namespace": "team-a", "pod": "train-7f9c"}, "90"),
            ({**base, "gpu": "1", "pod_namespace": "team-b", "pod_name": "notebook-0"}, "5"),
            ({**base, "gpu": "2"}, "0"),
            ({**base, "gpu": "3", "namespace": "team-a", "pod": "infer-1"}, "40"),
            ({**base, "gpu": "3", "namespace": "team-c", "pod": "infer-2"}, "40"),
        )
    )
    node = fleet({"util": util})["n1"]
    assert node.pods == {0: ("team-a/train-7f9c",), 1: ("team-b/notebook-0",), 3: ("team-a/infer-1", "team-c/infer-2")}
    assert [g.index for g in node.gpus] == [0, 1, 2, 3] and node.gpus[3].utilization_gpu == 40
