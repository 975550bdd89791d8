#!/usr/bin/env python3
"""The dashboard against REAL OpenSSH sshd instances: CPU (% of one core), RSS, first data and
new processes per instance per minute, for N instances x 8 GPUs at 1 Hz.

bench_dashboard.py measures the same process against the in-process demo servers, which hid a
2x difference in client CPU and every process the instance side starts. Here each instance is
its own sshd on loopback (tests/sshd.py, as the integration tier), with bench_watch.py's
fork-free fake nvidia-smi (8 GPUs); the dashboard is a real `gpu-tui --config CFG` process in a
private tmux server (bench_dashboard.Harness), logging in with the session's client key.

Figures per N:
- first 40 s: the dashboard's CPU from its start (connects, shipping the watch script, first
  frames), as % of one core;
- steady state: CPU % over `--windows` windows of `--seconds` each (median, min, max);
- RSS at the end (VmRSS, VmHWM);
- first data: from the dashboard's start until every row shows a utilisation (`NN%`);
- new processes per instance per minute on the instance side: strace following
  clone/clone3/fork/vfork in every process of the instances' sshd trees over one window.

Needs root (sshd), tmux and strace. From the repository root::

    .venv/bin/python benchmarks/bench_dashboard_sshd.py --sizes 8,32 --seconds 30 --windows 3
    .venv/bin/python benchmarks/bench_dashboard_sshd.py --sizes 32 --lang zh-CN
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
for p in (str(REPO / "benchmarks"), str(REPO / "tests"), str(REPO)):
    if p not in sys.path:
        sys.path.insert(0, p)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import bench_dashboard as bd  # noqa: E402
import bench_metrics as bm  # noqa: E402
import bench_watch as bw  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime + stime


def proc_rss_mib(pid: int) -> tuple[float, float]:
    status = Path(f"/proc/{pid}/status").read_text()
    kib = {k: int(v) for k, v in re.findall(r"^(VmRSS|VmHWM):\s+(\d+)", status, re.MULTILINE)}
    return kib["VmRSS"] / 1024, kib["VmHWM"] / 1024


def row_has_data(screen: str, name: str) -> bool:
    """The instance's row shows a utilisation (`NAME  online  8  93%`), in any language."""
    return re.search(rf"^\s*{re.escape(name)}\s.*?\s\d+\s+\d+%", screen, re.M) is not None


def write_config(work: Path, insts: list, lang: str | None) -> None:
    lines = ["[settings]", "refresh_seconds = 1.0", "connect_timeout_seconds = 20"]
    if lang:
        lines.append(f'language = "{lang}"')
    for i in insts:
        lines += ["", "[[instances]]", f'name = "{i.name}"', f'host = "{i.host}"', f"port = {i.port}",
                  f'identity_file = "{i.client_key_path}"', "hourly_rate = 1.5"]
    (work / "config.toml").write_text("\n".join(lines) + "\n")
    (work / "passwords.env").write_text("")


def one_size(h: bd.Harness, bench: bm.Bench, n: int, args: argparse.Namespace) -> dict:
    insts = bench.make(f"d{n}-", n, None)
    listeners = [i._proc.pid for i in insts]
    work = h.dir / f"sshd-{n}"
    work.mkdir()
    try:
        write_config(work, insts, args.lang)
        (h.data_dir / "known_hosts").write_text("".join(f"{i.host_public_key_line}\n" for i in insts))
        session = f"dash{n}"
        t0 = h.start_dashboard(session, h.wrapper(work, None))
        pid = h.dashboard_pid(session)
        cpu_start = proc_cpu_s(pid)
        names = [i.name for i in insts]
        first_data = None
        while time.monotonic() - t0 < 120:
            screen = h.capture(session)
            if all(row_has_data(screen, name) for name in names[: min(n, 12)]):  # the rows that fit
                first_data = time.monotonic() - t0
                break
            time.sleep(0.05)
        time.sleep(max(0.0, 40 - (time.monotonic() - t0)))
        first40 = 100 * (proc_cpu_s(pid) - cpu_start) / (time.monotonic() - t0)
        time.sleep(5)  # past the first frames' burst
        windows = []
        counter = bw.ForkCounter(bw.tree_pids(listeners))
        time.sleep(1.0)
        for k in range(args.windows):
            w0, c0 = time.monotonic(), proc_cpu_s(pid)
            time.sleep(args.seconds)
            windows.append(100 * (proc_cpu_s(pid) - c0) / (time.monotonic() - w0))
            if k == 0:
                forks = counter.stop()
                forks_window = time.monotonic() - w0
        screen = h.capture(session)
        if not Path(f"/proc/{pid}/status").exists() or "VmRSS" not in Path(f"/proc/{pid}/status").read_text():
            raise RuntimeError(f"the dashboard exited during the measurement; its screen:\n{screen}")
        rss, hwm = proc_rss_mib(pid)
        h.stop_dashboard(session, pid)
        return {
            "n": n, "lang": args.lang or "en", "loadavg": bw.loadavg(),
            "first_40s_cpu_pct": round(first40, 2),
            "steady_cpu_pct_median": round(statistics.median(windows), 2),
            "steady_cpu_pct_min": round(min(windows), 2), "steady_cpu_pct_max": round(max(windows), 2),
            "windows": [round(w, 2) for w in windows], "window_s": args.seconds,
            "rss_mib": round(rss, 1), "rss_hwm_mib": round(hwm, 1),
            "first_data_s": round(first_data, 2) if first_data is not None else None,
            "new_procs_per_inst_min": round(forks / n / (forks_window / 60), 2),
            "screen_has_polling_note": "polling fallback" in screen,
        }
    finally:
        bench.drop(insts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="8,32")
    ap.add_argument("--seconds", type=float, default=30.0, help="one steady-state window")
    ap.add_argument("--windows", type=int, default=3, help="steady-state windows (the median is the figure)")
    ap.add_argument("--lang", default=None, help="settings.language for the dashboard (default: English)")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    bench = bm.Bench(None, 8)
    bm.CHEAP_FAKE = bw.FORKLESS_FAKE
    h = bd.Harness()
    results = []
    try:
        h.start_tmux()
        for n in (int(x) for x in args.sizes.split(",")):
            r = one_size(h, bench, n, args)
            print(json.dumps(r), flush=True)
            results.append(r)
    finally:
        h.close()
        bench.cleanup()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
