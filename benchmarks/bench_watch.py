#!/usr/bin/env python3
"""The whole dashboard data path (services.fleet.Fleet: GPU stream + watch loop, or the old
polling) against N real OpenSSH sshd instances x 8 GPUs at 1 Hz: client CPU and RSS, new
processes per instance per minute, instance CPU, first data, a job's end to JobFinished.

Run it on this branch ("after") and, for "before", on another checkout of gpu_tui with
``--code DIR`` (DIR holds that checkout's ``gpu_tui`` package; the benchmark's own helpers and
tests/sshd.py still come from this repository)::

    .venv/bin/python benchmarks/bench_watch.py --sizes 8,32,64 --seconds 30
    git archive 51498de | tar -x -C /tmp/before && \\
      .venv/bin/python benchmarks/bench_watch.py --code /tmp/before --sizes 8,32,64 --seconds 30

The fake nvidia-smi here is fork-free, so the process count is gpu-tui's alone: by default
(`--frames live`) tests/livefake.py's, whose every frame moves as a GPU's under a training load
does; `--frames static` is FORKLESS_FAKE below (bash, `read -t` on a FIFO as its timer), one
baked-in frame every tick, kept as the named comparison row.
New processes are counted two ways: exactly, with strace following clone/fork/vfork/clone3
in every process of the instances' sshd trees over the window (threads count too); and
machine-wide, the change of /proc/sys/kernel/ns_last_pid over the same window minus the same
measure with the instances up and no client (noisy on a shared machine: the load average is
printed with each figure).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if "--code" in sys.argv:
    _code = sys.argv[sys.argv.index("--code") + 1]
    sys.path.insert(0, _code)
for p in (str(REPO / "benchmarks"), str(REPO / "tests")):
    sys.path.insert(1, p)
if "--code" not in sys.argv:
    sys.path.insert(0, str(REPO))
# first: bench_metrics puts this repository on sys.path too, and the package it finds first wins
__import__("gpu_tui")
import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

import bench_metrics as bm  # noqa: E402
import sshd as sshd_lib  # noqa: E402

import gpu_tui  # noqa: E402  (first: bench_metrics puts this repository on sys.path too)
from gpu_tui.config.settings import InstanceConfig  # noqa: E402
from gpu_tui.core.jobs import JobRequest, new_job_id  # noqa: E402
from gpu_tui.services.events import GpuFrameReceived  # noqa: E402
from gpu_tui.services.fleet import Fleet  # noqa: E402
from gpu_tui.services.jobs import runner as jobsvc  # noqa: E402
from gpu_tui.services.jobs.watch import JobFinished  # noqa: E402

FORKLESS_FAKE = r"""#!/bin/bash
# Fork-free fake nvidia-smi, written by benchmarks/bench_watch.py: the two queries gpu-tui makes,
# one-shot or looped (-lms / -l), answered from frames baked in ({gpus} x {capture}); the loop
# waits with bash's `read -t` on a FIFO nobody writes, so a tick starts no process.
FRAME='{frame}'
APPS='{apps}'
kind= ms= want=
for a do
    case $want in ms) ms=$a; want=; continue ;; s) ms=$((a * 1000)); want=; continue ;; esac
    case $a in
        '--query-gpu={gpu_fields}') kind=gpu ;;
        '--query-gpu=index') kind=index ;;
        '--query-compute-apps={apps_fields}') kind=apps ;;
        --format=csv,noheader,nounits|--format=csv,noheader) ;;
        -lms) want=ms ;;
        -l) want=s ;;
        *) exec "${{0%/*}}/nvidia-smi-full" "$@" ;;
    esac
done
case $kind in
    gpu) out=$FRAME ;;
    apps) out=$APPS ;;
    index) out=; i=0; while [ $i -lt {gpus} ]; do out="$out$i"$'\n'; i=$((i + 1)); done ;;
    *) exec "${{0%/*}}/nvidia-smi-full" "$@" ;;
esac
if [ -z "$ms" ]; then printf '%s' "$out"; exit 0; fi
f=${{TMPDIR:-/tmp}}/fake-nvsmi.$$
mkfifo "$f" && exec 9<>"$f"; rm -f "$f"
f3=$((ms % 1000 + 1000)); s="$((ms / 1000)).${{f3#1}}"
while :; do printf '%s' "$out" || exit 0; read -t "$s" -u 9 _; done
"""

CLK_TCK = os.sysconf("SC_CLK_TCK")


def loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[0]


def last_pid() -> int:
    return int(Path("/proc/sys/kernel/ns_last_pid").read_text())


def tree_pids(roots: list[int]) -> list[int]:
    out: list[int] = []
    for r in roots:
        out += [r, *sshd_lib.descendants(r)]
    return out


class ForkCounter:
    """strace -f over the instances' process trees: clone/fork/vfork/clone3 calls."""

    def __init__(self, pids: list[int]) -> None:
        self.out = Path(f"/tmp/bench-watch-strace-{os.getpid()}.txt")
        argv = ["strace", "-f", "-qq", "-c", "-o", str(self.out), "-e", "trace=clone,clone3,fork,vfork"]
        for p in pids:
            argv += ["-p", str(p)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> int:
        self.proc.send_signal(2)
        self.proc.wait(30)
        calls = 0
        for line in self.out.read_text().splitlines():
            m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(clone3?|v?fork)\s*$", line)
            if m:
                calls += int(m[1])
        self.out.unlink(missing_ok=True)
        return calls


async def one_size(bench: bm.Bench, n: int, seconds: float, job_probe: bool) -> dict:
    insts = bench.make(f"w{n}-", n, None)
    listeners = [i._proc.pid for i in insts]
    # idle baseline: instances up, no client
    await asyncio.sleep(2)
    b0, l0 = last_pid(), loadavg()
    await asyncio.sleep(seconds)
    idle_new = last_pid() - b0
    cfgs = [InstanceConfig(name=i.name, host=i.host, port=i.port) for i in insts]
    hosts = [bench.host(i) for i in insts]
    firsts: dict[str, float] = {}
    finished: list[tuple[float, object]] = []
    t_start = time.monotonic()

    def on_change(name: str, e: object) -> None:
        if isinstance(e, GpuFrameReceived) and name not in firsts:
            firsts[name] = time.monotonic() - t_start
        elif isinstance(e, JobFinished):
            finished.append((time.time(), e))

    cpu0 = time.process_time()
    fleet = Fleet(list(zip(cfgs, hosts, strict=True)), refresh_seconds=1.0, on_change=on_change)
    task = asyncio.create_task(fleet.run())
    try:
        while len(firsts) < n and time.monotonic() - t_start < 120:
            await asyncio.sleep(0.02)
        first_all = max(firsts.values()) if len(firsts) == n else None
        await asyncio.sleep(max(0.0, 40 - (time.monotonic() - t_start)))
        cpu_first40 = time.process_time() - cpu0
        # steady state window
        pids = tree_pids(listeners)
        counter = ForkCounter(pids)
        await asyncio.sleep(1.0)  # strace attached
        t1, c1, p1, la = time.monotonic(), time.process_time(), last_pid(), loadavg()
        ticks1 = bm.tree_cpu_ticks(listeners)
        await asyncio.sleep(seconds)
        t2, c2, p2, ticks2 = time.monotonic(), time.process_time(), last_pid(), bm.tree_cpu_ticks(listeners)
        forks = counter.stop()
        rss, hwm = bm.rss_mib()
        job_latency = None
        if job_probe:
            cfg, host = cfgs[0], hosts[0]
            req = await jobsvc.start_job(host, cfg, JobRequest(id=new_job_id(), command="sleep 2"))
            exit_file = insts[0].home() / ".gpu-tui" / "jobs" / req.id / "exit_code"
            end = time.monotonic() + 30
            while not exit_file.exists() and time.monotonic() < end:
                await asyncio.sleep(0.01)
            ended = exit_file.stat().st_mtime
            while not finished and time.monotonic() < end + 10:
                await asyncio.sleep(0.01)
            job_latency = finished[0][0] - ended if finished else None
        window = t2 - t1
        loops = getattr(fleet, "loops", {})
        return {
            "n": n,
            "code": str(Path(gpu_tui.__file__).parent.parent),
            "window_s": round(window, 1),
            "loadavg_idle_baseline": l0,
            "loadavg_window": la,
            "client_cpu_pct": round(100 * (c2 - c1) / window, 2),
            "client_cpu_first40s_pct": round(100 * cpu_first40 / 40, 2),
            "client_rss_mib": round(rss, 1),
            "client_rss_hwm_mib": round(hwm, 1),
            "first_data_all_s": round(first_all, 2) if first_all is not None else None,
            "new_procs_per_inst_min_strace": round(forks / n / (window / 60), 2),
            "new_procs_per_inst_min_machine": round(((p2 - p1) - idle_new * window / seconds) / n / (window / 60), 1),
            "instance_cpu_s_per_inst_h": round((ticks2 - ticks1) / CLK_TCK / n / (window / 3600), 1),
            "job_end_to_jobfinished_s": round(job_latency, 2) if job_latency is not None else None,
            "watch_live": sum(1 for lp in loops.values() if getattr(lp, "live", False)),
            "watch_notes": sorted({str(lp.note) for lp in loops.values() if getattr(lp, "note", None)}),
        }
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        for h in hosts:
            await h.close()
        bench.drop(insts)


async def amain(args: argparse.Namespace) -> list[dict]:
    bench = bm.Bench(None, 8, frames=args.frames, seed=args.seed)
    bm.CHEAP_FAKE = FORKLESS_FAKE
    results = []
    try:
        for i, n in enumerate(int(x) for x in args.sizes.split(",")):
            r = {"frames": args.frames, **await one_size(bench, n, args.seconds, job_probe=(i == 0))}
            print(json.dumps(r), flush=True)
            results.append(r)
    finally:
        bench.cleanup()
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", help="directory holding the gpu_tui package to measure (default: this checkout)")
    ap.add_argument("--sizes", default="8,32,64")
    ap.add_argument("--seconds", type=float, default=30.0, help="steady-state window (and idle baseline) per size")
    ap.add_argument("--quick", action="store_true", help="15 s windows")
    ap.add_argument(
        "--frames",
        choices=bm.FRAMES,
        default="live",
        help="live: every frame moves (tests/livefake.py, the default); static: one frame repeated",
    )
    ap.add_argument("--seed", type=int, default=1, help="the live fake's random walk (same seed, same walk)")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    if args.quick:
        args.seconds = 15.0
    results = asyncio.run(amain(args))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
