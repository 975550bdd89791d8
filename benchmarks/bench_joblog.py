"""The job log screen under a firehose: a job writing 10,000 tqdm-style updates a second.

`python benchmarks/bench_joblog.py [--seconds 60] [--rate 10000] [--lines-every 100] [--cr-line-kb 15]`

A real dashboard (`gpu-tui local`, so no SSH server shares the CPU) runs in a private tmux
server (100x30) with its own HOME. The benchmark starts a job through gpu-tui's own service
(`start_job` on a LocalHost, the same runner and files as on an instance) that for `--seconds`
writes `--rate` updates a second: tqdm-style bars redrawn with `\\r`, and every `--lines-every`-th
update a finished `step N loss X` line. With `--cr-line-kb K` it replays instead the redraw
states of a real Ultralytics log (tests/data/logs/real/ultralytics/yolo26-da-stops-epoch1.log: its
rows, `ESC[K` + `\\r` before each) at `--rate` states a second, ending a physical line with `\\n`
(and the table's header line) after every K KB: the `\\r`-redrawn 15 KB lines of YOLO logs. The
log screen (`l`) is opened right away and stays open.

Printed: the dashboard's CPU (% of one core) and RSS (at the end and peak) over the run; key to
repaint while the log streams (from just before `send-keys` until `capture-pane` shows the
change), p50/p95/max: `home` scrolls the log screen's log to its first line and `end` back to the
latest (the dashboard's `?` is not bound on that screen; Textual's scroll animation is off, so
the first repaint is timed, not an animation); and whether any line was lost: the count of
lines the log screen read (shown in its header) against the newlines in the file on disk.
Figures, not assertions. Needs tmux; a fake nvidia-smi from tests/fakes is put on PATH.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from procfs import proc_cpu_ticks, proc_mem_mib

from gpu_tui.ui.screens.job_log import MAX_LOG_LINES

REPO = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")

YOLO_LOG = REPO / "tests" / "data" / "logs" / "real" / "ultralytics" / "yolo26-da-stops-epoch1.log"

GENERATOR = r"""
import os, sys, time
seconds, rate, every, go = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
line_kb, real = (float(sys.argv[5]), sys.argv[6]) if len(sys.argv) > 6 else (0.0, "")
out = sys.stdout
states, header = [], ""
if line_kb:  # the real log's redraw states, and the header line above them
    data = open(real, "rb").read().decode("utf-8")
    for line in data.split("\n"):
        if "GPU_mem" in line and "box_loss" in line:
            header = line
        parts = line.split("\r\x1b[K")
        if len(parts) > 100:
            states = ["\r\x1b[K" + p for p in parts[1:] if p]
            break
row_bytes = 0
print("waiting for the log screen", flush=True)
while not os.path.exists(go):  # so that the screen reads the log from its first byte
    time.sleep(0.05)
total = int(seconds * rate)
start = time.monotonic()
batch = max(1, rate // 100)  # write in 10 ms slices
n = 0
while n < total:
    parts = []
    for _ in range(batch):
        n += 1
        if line_kb:
            state = states[n % len(states)]
            parts.append(state)
            row_bytes += len(state.encode())
            if row_bytes >= line_kb * 1024:
                parts.append("\n" + header + "\n")
                row_bytes = 0
        elif n % every == 0:
            parts.append(f"\rstep {n // every} loss {1.0 / (1 + n / rate):.4f}\n")
        else:
            pct = 100 * n // total
            parts.append(
                f"\rEpoch 1: {pct:3d}%|{'#' * (pct // 10):<10}| {n}/{total} [00:01<00:59, {rate}.00it/s, loss=0.5]"
            )
    out.write("".join(parts))
    out.flush()
    behind = start + n / rate - time.monotonic()
    if behind > 0:
        time.sleep(behind)
out.write("\ndone\n")
"""


class Tmux:
    def __init__(self, work: Path) -> None:
        self.sock = str(work / "tmux.sock")

    def __call__(self, *args: str, check: bool = True) -> str:
        res = subprocess.run(["tmux", "-S", self.sock, "-f", "/dev/null", *args], capture_output=True, text=True)
        if check and res.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {res.stderr.strip()}")
        return res.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", "bench")


def wait(pred, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(0.05)


def start_job(home: Path, seconds: float, rate: int, every: int, line_kb: float = 0.0) -> str:
    """The job goes through gpu-tui's own runner, as `r` in the dashboard would start it."""
    from gpu_tui.config.settings import InstanceConfig
    from gpu_tui.core.jobs import JobRequest, new_job_id
    from gpu_tui.remote.local import LocalHost
    from gpu_tui.services.jobs.runner import start_job as start

    (home / "gen.py").write_text(GENERATOR)
    host = LocalHost("bench", cwd=home)
    inst = InstanceConfig(name="bench", host="localhost")
    replay = f" {line_kb:g} {YOLO_LOG}" if line_kb else ""
    req = JobRequest(id=new_job_id(), command=f"python3 gen.py {seconds:g} {rate} {every} go{replay}", name="firehose")

    async def go() -> str:
        await host.connect()
        return (await start(host, inst, req)).id

    return asyncio.run(go())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rate", type=int, default=10_000, help="updates per second")
    ap.add_argument("--lines-every", type=int, default=100, help="every Nth update is a finished line")
    ap.add_argument("--key-every", type=float, default=1.0, help="seconds between key samples")
    ap.add_argument(
        "--cr-line-kb",
        type=float,
        default=0.0,
        help="replay a real YOLO log's \\r redraws, a newline every this many KB (0: tqdm-style firehose)",
    )
    args = ap.parse_args(argv)
    if not shutil.which("tmux"):
        print("needs tmux", file=sys.stderr)
        return 2

    work = Path(tempfile.mkdtemp(prefix="gpu-tui-bench-joblog-"))
    home = work / "home"
    home.mkdir()
    env = dict(
        os.environ,
        HOME=str(home),
        XDG_CONFIG_HOME=str(work / "cfg"),
        XDG_DATA_HOME=str(work / "data"),
        XDG_STATE_HOME=str(work / "state"),
        PATH=f"{REPO / 'tests' / 'fakes'}:{os.environ['PATH']}",
        TERM="tmux-256color",
        COLORTERM="truecolor",
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        # a scroll's smooth animation would be timed, not the key's first repaint
        TEXTUAL_ANIMATIONS="none",
    )
    os.environ.update(HOME=str(home))  # the job's state dir (~/.gpu-tui) is the dashboard's
    tmux = Tmux(work)
    try:
        job_id = start_job(home, args.seconds, args.rate, args.lines_every, args.cr_line_kb)
        gpu_tui = str(Path(sys.executable).with_name("gpu-tui"))
        wrapper = work / "run.sh"
        exported = (
            "HOME",
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "XDG_STATE_HOME",
            "PATH",
            "COLORTERM",
            "PYTHON_KEYRING_BACKEND",
            "TEXTUAL_ANIMATIONS",
        )
        wrapper.write_text(
            "#!/bin/sh\n"
            + "".join(f"export {k}='{v}'\n" for k, v in env.items() if k in exported)
            + f"exec {gpu_tui} local\n"
        )
        wrapper.chmod(0o755)
        tmux("new-session", "-d", "-s", "bench", "-x", "100", "-y", "30", str(wrapper))
        pid = int(tmux("display-message", "-p", "-t", "bench", "#{pane_pid}").strip())
        wait(lambda: "▶" in tmux.screen(), 30, "the job on the dashboard")
        tmux("send-keys", "-t", "bench", "l")
        wait(
            lambda: "firehose" in tmux.screen() and re.search(r"[\d,]+ lines?, ", tmux.screen()) is not None,
            15,
            "the log screen",
        )
        (home / "go").touch()
        c0, t0 = proc_cpu_ticks(pid, children=False), time.monotonic()
        lat: list[float] = []
        end = t0 + args.seconds
        showing = False
        # the log screen's own keys: `home` scrolls its log to the first line, `end` back to the
        # latest (the dashboard's `?` is not bound there). First let the log outgrow the screen
        first = "waiting for the log screen"
        undone = 0
        tmux("send-keys", "-t", "bench", "Tab")  # focus from the job picker to the log
        wait(lambda: first not in tmux.screen(), 30, "the log to outgrow the screen")
        capped = False
        while time.monotonic() < end:
            time.sleep(args.key_every)
            count = re.search(r"([\d,]+) lines?, ", tmux.screen())
            if count is not None and int(count[1].replace(",", "")) >= MAX_LOG_LINES:
                # the log keeps its last MAX_LOG_LINES lines: the first one has left it, so `home`
                # can no longer bring it back; the keys were measured until then
                capped = True
                break
            want = not showing
            ts = time.monotonic()
            key = "home" if want else "end"
            tmux("send-keys", "-t", "bench", key)
            while True:
                shown = first in tmux.screen()
                if shown == want:
                    break
                if time.monotonic() - ts > 3:
                    # a scroll to the end the screen queued for its last batch can land after the
                    # key and undo it: count that, and press again
                    undone += 1
                    if undone > 20:
                        raise RuntimeError(f"the log did not scroll; the screen:\n{tmux.screen()}")
                    ts = time.monotonic()
                    tmux("send-keys", "-t", "bench", key)
            lat.append(1000 * (time.monotonic() - ts))
            showing = want
        c1, t1 = proc_cpu_ticks(pid, children=False), time.monotonic()
        rss, peak = proc_mem_mib(pid)
        if showing:
            tmux("send-keys", "-t", "bench", "end")
        log = home / ".gpu-tui" / "jobs" / job_id / "log"
        wait(lambda: (log.parent / "exit_code").exists(), args.seconds + 30, "the job's end")
        expected = log.read_bytes().count(b"\n")
        size = log.stat().st_size

        def shown_lines() -> int | None:
            m = re.search(r"([\d,]+) lines?, ([\d.]+) MiB", tmux.screen())
            return int(m[1].replace(",", "")) if m else None

        try:
            wait(lambda: shown_lines() == expected, 15, "the log screen to catch up")
        except RuntimeError:
            pass
        got = shown_lines()
        lat.sort()
        p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]
        what = (
            f"{args.rate:,} real YOLO redraws/s on {args.cr_line_kb:g} KB \\r lines"
            if args.cr_line_kb
            else f"{args.rate:,} updates/s ({args.rate // args.lines_every:,} finished lines/s)"
        )
        print(
            f"job log screen, {what} for {args.seconds:g} s; {os.cpu_count()} CPUs, "
            f"Python {sys.version.split()[0]}, host {socket.gethostname()}, load {os.getloadavg()[0]:.1f}"
        )
        print(
            f"  dashboard CPU {100 * (c1 - c0) / CLK_TCK / (t1 - t0):.1f} % of one core; "
            f"RSS {rss:.1f} MiB (peak {peak:.1f})"
        )
        print(
            f"  key to repaint (home/end in the log, {len(lat)} presses): "
            f"p50 {statistics.median(lat):.1f} ms, p95 {p95:.1f} ms, "
            f"max {lat[-1]:.1f} ms   (target p95 < 100 ms)"
            + (f"; {undone} key(s) undone by the log's follow and pressed again" if undone else "")
            + (f"; measured until the log passed its {MAX_LOG_LINES:,}-line cap" if capped else "")
        )
        print(
            f"  lines: {expected:,} in the file ({size / 1048576:.1f} MiB), "
            f"{got if got is not None else '?':,} read by the log screen: "
            + ("none lost" if got == expected else f"{'?' if got is None else expected - got} missing")
        )
        return 0
    finally:
        tmux("kill-server", check=False)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
