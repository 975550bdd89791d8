"""A lab's fleet through Prometheus (issue 26): one refresh of services/monitor/prometheus
`read_fleet` against Debian's real prometheus scraping N loopback dcgm-exporter stand-ins
(tests/promhelp.py) of 8 GPUs each.

`python benchmarks/bench_prometheus.py [--nodes 64 256] [--refreshes 20]`

Printed per size: queries and answer bytes per refresh (one query per metric, whatever the node
count), the refresh's wall time (p50 / p95), and this process's CPU per refresh and per hour at
the default 15 s refresh. Figures, not assertions; needs the `prometheus` binary.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from promhelp import DcgmExporter, Prometheus  # noqa: E402

from gpu_tui.services.monitor.prometheus import PromSource, read_fleet  # noqa: E402

REFRESH_S = 15.0


def one_size(nodes: int, refreshes: int) -> None:
    exporters = [DcgmExporter(f"node-{i:03d}", 8) for i in range(nodes)]
    with tempfile.TemporaryDirectory() as tmp:
        prom = Prometheus(Path(tmp), [e.target for e in exporters])
        try:
            prom.wait_ready()
            deadline = time.monotonic() + 120
            while len(prom.query("DCGM_FI_DEV_GPU_UTIL")) < nodes * 8:
                if time.monotonic() > deadline:
                    raise TimeoutError("prometheus did not scrape every exporter")
                time.sleep(0.5)
            source = PromSource("lab", prom.url)
            walls, cpus, last = [], [], None
            for _ in range(refreshes):
                c0, w0 = time.process_time(), time.perf_counter()
                last = asyncio.run(read_fleet(source))
                walls.append(time.perf_counter() - w0)
                cpus.append(time.process_time() - c0)
            assert last is not None
            gpus = sum(len(n.gpus) for n in last.nodes.values())
            walls.sort()
            cpu = statistics.median(cpus)
            p50, p95 = 1000 * statistics.median(walls), 1000 * walls[int(0.95 * (len(walls) - 1))]
            print(
                f"{nodes} nodes x 8 ({gpus} GPUs read): {last.queries} queries, {last.bytes / 1024:.0f} KiB per "
                f"refresh; wall p50 {p50:.0f} ms, p95 {p95:.0f} ms; CPU {1000 * cpu:.0f} ms per refresh = "
                f"{100 * cpu / REFRESH_S:.2f} % of a core at {REFRESH_S:.0f} s"
            )
        finally:
            prom.stop()
            for e in exporters:
                e.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--refreshes", type=int, default=20)
    args = ap.parse_args()
    for n in args.nodes:
        one_size(n, args.refreshes)


if __name__ == "__main__":
    main()
