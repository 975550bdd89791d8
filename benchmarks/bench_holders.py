"""The GPU holders scan (services/monitor/holders.sh, issue 27): its CPU per scan on an instance
with N processes (a loop of shell builtins over /proc/*/fd; `tr` reads a new holder's command
line, so the first scan is also run with an empty PATH).

N processes of this machine (`sleep`, started by bash) each hold `--fds` files open (a training box's processes hold
from a handful to a few hundred: DataLoader workers, logs, sockets); `--holders` of them also
hold a stand-in GPU device file (`dev/nvidia0`, a character device made with mknod, so root).
The scan runs `--scans` times in one `sh` (as in the watch loop: what it kept from the last scan
stays), the first with the holders new to it (their command lines read), the rest unchanged;
CPU is the child's utime + stime (getrusage), wall the elapsed time.

    sudo .venv/bin/python benchmarks/bench_holders.py --procs 500 --fds 20 --holders 4

Figures: ms of CPU per scan (first and steady) per way, and as % of one core at the watch loop's
cadence (a scan every 5th tick of 2 s, or every N/20th on a box of N > 100 processes).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpu_tui.services.monitor.probes import holders_script  # noqa: E402
from gpu_tui.services.monitor.watchloop import HOLDERS_EVERY, TICK_SECONDS  # noqa: E402


def spawn(root: Path, procs: int, fds: int, holders: int) -> list[subprocess.Popen[bytes]]:
    files = root / "files"
    files.mkdir()
    (files / "f").write_text("x")
    dev = root / "dev" / "nvidia0"
    started = []
    for i in range(procs):
        opens = " ".join(f"{3 + k}<{files / 'f'}" for k in range(fds - (1 if i < holders else 0)))
        if i < holders:
            opens += f" {3 + fds - 1}<{dev}"
        # bash: dash's exec takes only one-digit descriptors; sleep inherits them all
        started.append(subprocess.Popen(["bash", "-c", f"exec {opens}; exec sleep 600"]))
    time.sleep(1.0)
    dead = [p for p in started if p.poll() is not None]
    if dead:
        raise SystemExit(f"{len(dead)} of the {procs} processes did not start")
    return started


def measure(root: Path, scans: int, path: str | None) -> tuple[float, float, float]:
    """(first scan CPU ms, steady scan CPU ms, steady wall ms) of `scans` scans in one sh."""
    script = holders_script() + (
        "gpu_holders; t0=$(date +%s%N 2>/dev/null)\n"
        f"i=1; while [ $i -lt {scans} ]; do gpu_holders; i=$((i+1)); done\n"
        'printf "%s\\n" "$GH" > /dev/null\n'
    )
    env = dict(os.environ, GPU_TUI_SYSROOT=str(root))
    if path is not None:
        env["PATH"] = path
    sh = shutil.which("sh") or "/bin/sh"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    # the first scan alone
    subprocess.run([sh, "-c", holders_script() + "gpu_holders\n"], env=env, check=True)
    mid = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run([sh, "-c", script], env=env, check=True)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    first = (mid.ru_utime + mid.ru_stime - before.ru_utime - before.ru_stime) * 1000
    total = (after.ru_utime + after.ru_stime - mid.ru_utime - mid.ru_stime) * 1000
    steady = (total - first) / max(1, scans - 1)
    return first, steady, (wall * 1000 - first) / max(1, scans - 1)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--procs", type=int, default=500)
    ap.add_argument("--fds", type=int, default=20)
    ap.add_argument("--holders", type=int, default=4)
    ap.add_argument("--scans", type=int, default=20)
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("needs root (mknod for the device stand-in)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "dev").mkdir()
        for name in ("nvidia0", "nvidiactl"):
            os.mknod(root / "dev" / name, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        started = spawn(root, args.procs, args.fds, args.holders)
        try:
            time.sleep(1.0)
            seen = sum(1 for e in os.listdir("/proc") if e.isdigit())
            print(
                f"{args.procs} processes x {args.fds} open files, {args.holders} holding dev/nvidia0 "
                f"({seen} processes on the machine in all); {args.scans} scans per way"
            )
            # the watch loop's cadence: every HOLDERS_EVERY ticks, or a tick per 20 processes
            every = max(HOLDERS_EVERY, seen // 20) * TICK_SECONDS
            for label, path in (("PATH as usual", None), ("empty PATH (no tr)", "/nonexistent-dir")):
                first, steady, wall = measure(root, args.scans, path)
                print(
                    f"  {label:<24} first scan {first:6.1f} ms CPU, then {steady:6.1f} ms CPU "
                    f"({wall:6.1f} ms wall) a scan; every {every:g} s: {steady / every / 10:.2f} % of a core"
                )
        finally:
            for p in started:
                p.kill()
            for p in started:
                p.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
