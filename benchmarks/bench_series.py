"""The series summariser on the instance (`gpu-tui metrics`, issue 24): a first scan of a long
log, then the catch-up of one minute's growth, each as `metrics` asks for it.

`python benchmarks/bench_series.py [--mb 40 200] [--growth-mb 1] [--python PYTHON]`

Each log is built in a temporary directory (never committed) as bench_logparse.py builds its
log: the real corpus (tests/data/logs/real/**/*.log) repeated to `--mb` MB. The shipped files
(services/jobs/series/ship.bundle_files) are installed under a temporary state_dir and the
summariser run exactly as `metrics` runs it on an instance (`summariser.py STATE once JOBDIR`,
its `@@status` line and every point on stdout), by `--python` (default: this one). Timed: the
first scan (the whole log), then `--growth-mb` MB appended (about a minute of a chatty run's
log) and caught up; each with the time to read every point back here (decode_points), which is
what `metrics --json` then prints. Over SSH add the link's transfer of the points.

Then `metrics`' own reading of the same job, end to end (services/jobs/series/read.py
`read_series` over a LocalHost: the catch-up script, the summariser, the transfer, the decode
into Series): without a cache (every point sent each time, as before the copy was kept), and
with one (the first call fetches the file and keeps it; later ones only what was appended),
after `--growth-mb` more and after nothing. Last, the log screen's whole-run read
(ui/runseries.read_curves, what its chart waits for on an open) with the dashboard's cache: a
first open (the instance's overview first, then every point), an open again, an open after more
growth. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from bench_logparse import build, corpus

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.jobs import JobFacts, JobInfo
from gpu_tui.core.trainlog.series import decode_points
from gpu_tui.remote.local import LocalHost
from gpu_tui.services.jobs.series import ship
from gpu_tui.services.jobs.series.cache import SeriesCache
from gpu_tui.services.jobs.series.read import JobSeries, read_series
from gpu_tui.ui.runseries import overview_first, read_curves


def install(state: Path) -> Path:
    for name, text in ship.bundle_files().items():
        path = state / "bin" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return state / "bin" / ship.DIR / "summariser.py"


def once(python: str, script: Path, state: Path, job: Path) -> tuple[float, float, int, bytes]:
    """(seconds on the instance, seconds to read the points here, points, the status line)."""
    start = time.perf_counter()
    out = subprocess.run([python, "-S", str(script), str(state), "once", str(job)], capture_output=True, check=True)
    ran = time.perf_counter() - start
    head, _nl, body = out.stdout.partition(b"\n")
    start = time.perf_counter()
    points = sum(len(p) for p in decode_points(zlib.decompress(body).decode("utf-8", "replace")).values())
    return ran, time.perf_counter() - start, points, head + b" (%.1f MB sent)" % (len(body) / 2**20)


def client(state: Path, job: Path, cache: SeriesCache | None) -> tuple[float, JobSeries]:
    """(seconds, what `metrics` got) of one read_series, as `metrics` calls it."""
    inst = InstanceConfig(name="bench", host="localhost", state_dir=str(state))

    async def go() -> JobSeries:
        host = LocalHost()
        await host.connect()
        try:
            return await read_series(host, inst, job.name, cache=cache)
        finally:
            await host.close()

    start = time.perf_counter()
    got = asyncio.run(go())
    return time.perf_counter() - start, got


def screen_read(state: Path, job: Path, cache: SeriesCache) -> tuple[float | None, int, float, dict[str, object]]:
    """The log screen's whole-run read of the job, as its worker makes it: (seconds to the
    instance's overview and its points, when the screen asks for it first; seconds to every
    point; the curves)."""
    inst = InstanceConfig(name="bench", host="localhost", state_dir=str(state))
    info = JobInfo(JobFacts(id=job.name), "running")
    start = time.perf_counter()
    first: list[float] = []
    first_points = 0

    async def go() -> dict[str, object]:
        nonlocal first_points
        host = LocalHost()
        await host.connect()
        try:
            if overview_first(cache, inst, info):
                thin = await read_curves(host, inst, "bench", info, compare=False, thin=True)
                first.append(time.perf_counter() - start)
                first_points = sum(c.count for c in thin.curves.values())
            return dict((await read_curves(host, inst, "bench", info, compare=False, cache=cache)).curves)
        finally:
            await host.close()

    curves = asyncio.run(go())
    return (first[0] if first else None), first_points, time.perf_counter() - start, curves


def grow(log: Path, growth: bytes, mb: float) -> None:
    want = int(mb * 2**20)
    with log.open("ab") as f:
        while want > 0:
            f.write(growth[:want])
            want -= len(growth[:want])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, nargs="+", default=[40.0, 200.0])
    ap.add_argument("--growth-mb", type=float, default=1.0)
    ap.add_argument("--python", default=sys.executable)
    args = ap.parse_args()
    version = subprocess.run([args.python, "-V"], capture_output=True, text=True).stdout.strip()
    print(f"summariser by {version}; {os.cpu_count()} CPUs, host {socket.gethostname()}, load {os.getloadavg()[0]:.1f}")
    growth = b"".join(corpus("utf-8"))
    for mb in args.mb:
        with tempfile.TemporaryDirectory() as tmp:
            state = Path(tmp) / "state"
            script = install(state)
            job = state / "jobs" / "20260101-000000-beef"  # a job id, as read_series wants
            job.mkdir(parents=True)
            size, _files = build(job / "log", mb, "utf-8")
            ran, read, points, _status = once(args.python, script, state, job)
            series = (job / "series.jsonl").stat().st_size
            print(
                f"  {size / 2**20:.0f} MB log, first scan: {ran:.1f} s on the instance ({size / 2**20 / ran:.2f} MB/s),"
                f" {points:,} points ({series / 2**20:.1f} MB of series), read back here in {read:.2f} s"
            )
            want = int(args.growth_mb * 2**20)
            with (job / "log").open("ab") as f:
                while want > 0:
                    f.write(growth[:want])
                    want -= len(growth[:want])
            ran, read, points, status = once(args.python, script, state, job)
            print(
                f"  + {args.growth_mb:g} MB grown: catch-up {ran:.2f} s on the instance (every point printed),"
                f" {points:,} points read back here in {read:.2f} s; {status.decode()}"
            )
            ran, read, points, _status = once(args.python, script, state, job)
            print(f"  nothing grown: {ran:.2f} s on the instance, read back in {read:.2f} s")

            def said(label: str, took: float, got: JobSeries) -> None:
                n = sum(len(s.points) for s in got.series)
                sent = (got.fetched or 0) / 2**20
                print(f"  metrics {label}: {took:.2f} s end to end, {n:,} points, {sent:.2f} MB of series fetched")

            cache = SeriesCache(Path(tmp) / "cache")
            said("without a cache, nothing grown", *client(state, job, None))
            said("first call (cache empty)", *client(state, job, cache))
            grow(job / "log", growth, args.growth_mb)
            said(f"later call, + {args.growth_mb:g} MB grown", *client(state, job, cache))
            said("later call, nothing grown", *client(state, job, cache))
            grow(job / "log", growth, args.growth_mb)
            said(f"without a cache, + {args.growth_mb:g} MB grown", *client(state, job, None))
            # the log screen's whole-run read (ui/runseries.read_curves: read_series, then the
            # curves thinned for drawing), with the dashboard's cache: what an open waits for
            screen = SeriesCache(Path(tmp) / "screen-cache")
            for label in ("log screen, first open", "log screen, opened again", "log screen, + growth"):
                if label.endswith("growth"):
                    grow(job / "log", growth, args.growth_mb)
                thin, thin_points, took, curves = screen_read(state, job, screen)
                if thin is not None:
                    print(f"  {label}: {thin:.2f} s to the overview's curves ({thin_points:,} points)", end="; ")
                print(f"  {label}: {took:.2f} s to every point's curves ({len(curves)} series)")


if __name__ == "__main__":
    main()
