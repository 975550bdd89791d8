"""The dashboard on a lab's fleet through its Prometheus (issue 26).

A real `gpu-tui --config CFG` process in a private tmux pane, its config only `[prometheus.lab]`
(the default 15 s refresh), against Debian's real prometheus scraping N loopback stand-ins for
dcgm-exporter (tests/promhelp.py) of 8 GPUs each, every 15 s as a lab scrapes. Every scrape
moves every GPU (utilisation random-walks, power follows it, memory and temperature drift), so
no refresh repaints what the last one did.

    .venv/bin/python benchmarks/bench_lab_dashboard.py                        # 64 and 256 nodes
    .venv/bin/python benchmarks/bench_lab_dashboard.py --nodes 64 --seconds 60 --size 160x45
    .venv/bin/python benchmarks/bench_lab_dashboard.py --nodes 256 --profile /tmp/lab.prof

Printed per size: the time from start to every row filled (the top bar's `N/N online`: a node is
online only once its GPUs are read), start-up CPU (start until 30 s after that), steady CPU over
`--seconds` (% of one core), RSS, and the queries and answer bytes per refresh that Prometheus
itself counted (its /metrics) over the steady window. Figures, not assertions. Needs the
`prometheus` binary and tmux; not root.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for p in (str(REPO / "benchmarks"), str(REPO / "tests"), str(REPO)):
    if p not in sys.path:
        sys.path.insert(0, p)

import argparse  # noqa: E402
import os  # noqa: E402
import pstats  # noqa: E402
import random  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402

import bench_dashboard as bd  # noqa: E402
from procfs import proc_cpu_ticks, proc_mem_mib  # noqa: E402
from promhelp import DcgmExporter, Prometheus  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
SCRAPE_S = 15
STARTUP_AFTER_FILLED_S = 30.0


class LiveExporter(DcgmExporter):
    """A node under a training load: every scrape reads new values."""

    def __init__(self, node: str, gpus: int, seed: int) -> None:
        super().__init__(node, gpus)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        for g in self.values:
            g["DCGM_FI_DEV_GPU_UTIL"] = float(self._rng.randint(0, 100))

    def text(self) -> str:
        rng = self._rng
        with self._lock:
            for g in self.values:
                util = min(100.0, max(0.0, float(g["DCGM_FI_DEV_GPU_UTIL"]) + rng.uniform(-20, 20)))
                used = float(g["DCGM_FI_DEV_FB_USED"]) + rng.choice((0.0, 0.0, 0.0, 384.0, -384.0))
                used = min(80000.0, max(512.0, used))
                g["DCGM_FI_DEV_GPU_UTIL"] = round(util)
                g["DCGM_FI_DEV_POWER_USAGE"] = round(60 + 3.4 * util + rng.uniform(-8, 8), 3)
                g["DCGM_FI_DEV_FB_USED"], g["DCGM_FI_DEV_FB_FREE"] = used, 81920.0 - used
                g["DCGM_FI_DEV_GPU_TEMP"] = round(35 + 0.45 * util + rng.uniform(-1, 1))
            return super().text()


def query_counters(prom: Prometheus) -> tuple[float, float]:
    """(instant queries answered, their answer bytes) by Prometheus's own /metrics."""
    with urllib.request.urlopen(prom.url + "/metrics", timeout=10) as answer:  # noqa: S310 (loopback)
        text = answer.read().decode()
    handler = 'handler="/api/v1/query"'
    count = sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("prometheus_http_requests_total{") and handler in line
    )
    size = sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("prometheus_http_response_size_bytes_sum{") and handler in line
    )
    return count, size


def wrapper(h: bd.Harness, config: Path, profile: Path | None) -> Path:
    python = Path(sys.executable)
    gpu_tui = python.with_name("gpu-tui")
    q = shlex.quote
    run = f"{q(str(gpu_tui))} --config {q(str(config))}"
    if profile is not None:
        run = f"{q(str(python))} -m cProfile -o {q(str(profile))} {run}"
    script = h.dir / "run.sh"
    script.write_text(
        "#!/bin/sh\nexport COLORTERM=truecolor PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring\n"
        f"cd {q(str(REPO))}\nexec {run}\n"
    )
    script.chmod(0o700)
    return script


def one_size(n: int, args: argparse.Namespace) -> dict[str, float]:
    cols, rows = args.size
    exporters = [LiveExporter(f"gpu-node-{i:03d}", 8, seed=i) for i in range(n)]
    h = bd.Harness()
    prom = Prometheus(h.dir / "prom", [e.target for e in exporters], scrape_seconds=SCRAPE_S)
    try:
        prom.wait_ready()
        deadline = time.monotonic() + 3 * SCRAPE_S + 30
        while len(prom.query("DCGM_FI_DEV_GPU_UTIL")) < n * 8:
            if time.monotonic() > deadline:
                raise TimeoutError("prometheus did not scrape every exporter")
            time.sleep(0.5)
        config = h.dir / "config.toml"
        config.write_text(f'[prometheus.lab]\nurl = "{prom.url}"\nhourly_rate = 1.2\ncurrency = "$"\n')
        h.start_tmux()
        script = wrapper(h, config, args.profile)
        t0 = time.monotonic()
        h.tmux("new-session", "-d", "-s", "dash", "-x", str(cols), "-y", str(rows), str(script))
        pid = h.dashboard_pid("dash")
        filled = re.compile(rf"\b{n}/{n} online\b")
        while not filled.search(h.capture("dash")):
            if time.monotonic() - t0 > 120:
                raise TimeoutError(f"not every row filled after 120 s:\n{h.capture('dash')}")
            time.sleep(0.05)
        filled_s = time.monotonic() - t0
        time.sleep(max(0.0, t0 + filled_s + STARTUP_AFTER_FILLED_S - time.monotonic()))
        startup_cpu = proc_cpu_ticks(pid, children=False) / CLK_TCK
        startup_s = time.monotonic() - t0
        q0, b0 = query_counters(prom)
        c0, w0 = proc_cpu_ticks(pid, children=False), time.monotonic()
        time.sleep(args.seconds)
        c1, w1 = proc_cpu_ticks(pid, children=False), time.monotonic()
        q1, b1 = query_counters(prom)
        rss, hwm = proc_mem_mib(pid)
        screen = h.capture("dash")
        clean = h.stop_dashboard("dash", pid)
        refreshes = (w1 - w0) / SCRAPE_S
        out = {
            "nodes": n,
            "gpus": n * 8,
            "filled_s": filled_s,
            "startup_pct": 100 * startup_cpu / startup_s,
            "steady_pct": 100 * (c1 - c0) / CLK_TCK / (w1 - w0),
            "rss_mib": rss,
            "hwm_mib": hwm,
            "queries_per_refresh": (q1 - q0) / refreshes,
            "kib_per_refresh": (b1 - b0) / refreshes / 1024,
        }
        print(
            f"{n} nodes x 8 = {n * 8} GPUs at {cols}x{rows}: every row filled {filled_s:.2f} s after start; "
            f"start-up {out['startup_pct']:.2f} % of a core (to {STARTUP_AFTER_FILLED_S:.0f} s after); steady "
            f"{out['steady_pct']:.2f} % over {w1 - w0:.0f} s; RSS {rss:.0f} MiB (peak {hwm:.0f}); "
            f"{out['queries_per_refresh']:.1f} queries and {out['kib_per_refresh']:.0f} KiB per refresh",
            flush=True,
        )
        if args.show_screen:
            print(screen)
        if args.profile is not None and clean:
            pstats.Stats(str(args.profile)).sort_stats("tottime").print_stats(args.profile_top)
        return out
    finally:
        h.close()
        prom.stop()
        for e in exporters:
            e.stop()


def size(text: str) -> tuple[int, int]:
    cols, rows = text.lower().split("x")
    return int(cols), int(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[64, 256])
    ap.add_argument("--seconds", type=float, default=120.0, help="the steady window (default 120: 8 refreshes)")
    ap.add_argument("--size", type=size, default=(80, 24), help="the terminal, COLSxROWS (default 80x24)")
    ap.add_argument("--profile", type=Path, default=None, help="run the dashboard under cProfile, write it here")
    ap.add_argument("--profile-top", type=int, default=25)
    ap.add_argument("--show-screen", action="store_true", help="print the screen at the end of each run")
    args = ap.parse_args()
    for n in args.nodes:
        one_size(n, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
