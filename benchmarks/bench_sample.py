#!/usr/bin/env python3
"""Client CPU per GPU sample: a bare asyncssh read vs gpu-tui's metrics path vs parsing alone.

Three ways to spend client CPU on the same bytes (N hosts x 8 GPUs, 1 Hz, the `nvidia-smi
--query-gpu=... -lms 1000` stream of benchmarks/bench_watch.py's fork-free fake, each host a
real OpenSSH sshd from tests/sshd.py):

- ``bare``: asyncssh alone. One connection per host (made by SshHost.connect, so the options
  and keepalive are gpu-tui's), one ``create_process`` of the same command line, text mode,
  and a loop of ``stdout.read(65536)`` that only counts newlines. The floor for these bytes.
- ``fleet``: gpu-tui's path without the UI: ``services.fleet.Fleet`` (SshHost, HostMonitor's
  GPU stream, FrameAssembler, GpuSample/GpuFrame, the events, the view and its history, the
  JobWatcher's idle wake-ups), with the monitor's stats / watch-loop task replaced by a wait
  (``--with-watch`` keeps it), so both ways carry the same bytes.
- ``parse``: no I/O at all. The frame the fake prints (recorded once), replayed as one chunk
  per tick through a fake Host into the real ``HostMonitor._gpu_loop`` and ``Fleet`` (so:
  chunk splitting, FrameAssembler, model construction, events, view update, history append),
  and, beside it, FrameAssembler alone over the same chunk.

Hosts start 1/N s apart in both socket ways, so their ticks are spread over the second (each
sample its own event-loop wake-up, as with instances connected at different times; hosts that
tick together share wake-ups and look cheaper per sample). The figure is
``time.process_time()`` of this process (all of asyncio, asyncssh, gpu-tui) over a window
divided by the samples (8-GPU frames) that arrived in it: less sensitive to other load on the
machine than wall time, but not immune (cache and frequency effects), so each configuration
runs ``--windows`` windows and the median is printed, with the 1-minute load
average. CPU-s per host-hour = µs per sample x 3600 (1 Hz).

Run (as root, from the repository root)::

    .venv/bin/python benchmarks/bench_sample.py                    # N = 8, 32; 3 x 20 s windows
    .venv/bin/python benchmarks/bench_sample.py --modes parse      # no sshd needed, ~10 s
    .venv/bin/python benchmarks/bench_sample.py --modes fleet --sizes 32 --windows 1 \\
        --seconds 60 --profile /tmp/fleet.prof                     # cProfile of that window

Cleanup as in bench_metrics.py: every sshd it started is killed at the end (and on Ctrl-C).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# --code DIR: measure another checkout's gpu_tui package (its DIR first on sys.path)
CODE = sys.argv[sys.argv.index("--code") + 1] if "--code" in sys.argv else str(REPO)
for p in (str(REPO / "tests"), str(REPO / "benchmarks"), str(REPO), CODE):
    if p in sys.path:
        sys.path.remove(p)
    sys.path.insert(0, p)
__import__("gpu_tui")  # before bench_metrics / bench_watch, which put this repository first

import argparse  # noqa: E402
import asyncio  # noqa: E402
import cProfile  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import pstats  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import AsyncIterator  # noqa: E402
from contextlib import asynccontextmanager  # noqa: E402
from typing import Any  # noqa: E402

import asyncssh  # noqa: E402
import bench_metrics as bm  # noqa: E402
from bench_watch import FORKLESS_FAKE  # noqa: E402

import gpu_tui  # noqa: E402
from gpu_tui.config.settings import InstanceConfig  # noqa: E402
from gpu_tui.core.metrics import nvsmi  # noqa: E402
from gpu_tui.core.models import GpuFrame  # noqa: E402
from gpu_tui.remote.host import CommandResult, Host, LineStream  # noqa: E402
from gpu_tui.services.events import GpuFrameReceived  # noqa: E402
from gpu_tui.services.fleet import Fleet  # noqa: E402
from gpu_tui.services.monitor import probes  # noqa: E402
from gpu_tui.services.monitor.host import HostMonitor  # noqa: E402

GPUS = 8


def loadavg() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


class Counter:
    def __init__(self, n: int) -> None:
        self.samples = 0
        self.first: set[str] = set()
        self.n = n
        self.chunks = 0


async def windows(
    counter: Counter, n_windows: int, seconds: float, prof: cProfile.Profile | None
) -> list[dict[str, float]]:
    """Wait for every host's first sample, settle 2 s, then measure `n_windows` windows."""
    end = time.monotonic() + 120
    while len(counter.first) < counter.n:
        if time.monotonic() > end:
            raise SystemExit(f"only {len(counter.first)}/{counter.n} hosts sampling after 120 s")
        await asyncio.sleep(0.05)
    await asyncio.sleep(2.0)
    out = []
    for _ in range(n_windows):
        la = loadavg()
        s0, k0, c0, t0 = counter.samples, counter.chunks, time.process_time(), time.monotonic()
        o0 = os.times()
        if prof is not None:
            prof.enable()
        await asyncio.sleep(seconds)
        if prof is not None:
            prof.disable()
        s1, k1, c1, t1 = counter.samples, counter.chunks, time.process_time(), time.monotonic()
        o1 = os.times()
        samples = s1 - s0
        out.append(
            {
                "us_per_sample": 1e6 * (c1 - c0) / samples if samples else float("nan"),
                "us_user": 1e6 * (o1.user - o0.user) / samples if samples else float("nan"),
                "us_sys": 1e6 * (o1.system - o0.system) / samples if samples else float("nan"),
                "samples": samples,
                "expected": round(counter.n * (t1 - t0)),
                "chunks_per_sample": (k1 - k0) / samples if samples and k1 > k0 else 0.0,
                "cpu_pct": 100 * (c1 - c0) / (t1 - t0),
                "loadavg": la,
            }
        )
    return out


async def run_bare(bench: bm.Bench, n: int, args: argparse.Namespace) -> list[dict[str, float]]:
    insts = bench.make(f"b{n}-", n, None)
    hosts = [bench.host(i) for i in insts]
    counter = Counter(n)
    command = probes.gpu_stream_command(1.0)

    async def one(host: Any) -> None:
        await host.connect()
        conn = host.connection()
        proc = await conn.create_process(command, encoding="utf-8", errors="replace", stderr=asyncssh.STDOUT)
        read = proc.stdout.read
        rows = 0
        while True:
            chunk = await read(65536)
            if not chunk:
                return
            counter.chunks += 1
            rows += chunk.count("\n")
            if rows >= GPUS:
                counter.samples += rows // GPUS
                rows %= GPUS
                counter.first.add(host.name)

    tasks = []
    try:
        for h in hosts:
            tasks.append(asyncio.create_task(one(h)))
            await asyncio.sleep(1.0 / n)  # hosts' ticks spread over the second, as in run_fleet
        return await windows(counter, args.windows, args.seconds, None)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for h in hosts:
            await h.close()
        bench.drop(insts)


async def _no_stats(self: HostMonitor) -> None:
    await asyncio.Event().wait()


async def run_fleet(
    bench: bm.Bench, n: int, args: argparse.Namespace, prof: cProfile.Profile | None
) -> list[dict[str, float]]:
    insts = bench.make(f"f{n}-", n, None)
    hosts = [bench.host(i) for i in insts]
    cfgs = [InstanceConfig(name=i.name, host=i.host, port=i.port) for i in insts]
    counter = Counter(n)

    def on_change(name: str, e: object) -> None:
        if isinstance(e, GpuFrameReceived):
            counter.samples += 1
            counter.first.add(name)

    saved = HostMonitor._stats_or_watch
    if not args.with_watch:
        HostMonitor._stats_or_watch = _no_stats
    fleet = Fleet([], refresh_seconds=1.0, on_change=on_change)
    task = asyncio.create_task(fleet.run())
    try:
        await asyncio.sleep(0)
        for cfg, host in zip(cfgs, hosts, strict=True):
            fleet.add(cfg, host)
            await asyncio.sleep(1.0 / n)  # hosts' ticks spread over the second, as in run_bare
        return await windows(counter, args.windows, args.seconds, prof)
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        HostMonitor._stats_or_watch = saved
        for h in hosts:
            await h.close()
        bench.drop(insts)


# ------------------------------------------------------------------------------ parse only


class _Replay(LineStream):
    def __init__(self, chunks: list[str], done: asyncio.Future[None]) -> None:
        self._chunks = chunks
        self._done = done

    def __aiter__(self) -> AsyncIterator[str]:
        raise NotImplementedError

    @property
    def exit_status(self) -> int | None:
        return None

    async def chunks(self) -> AsyncIterator[str]:
        for c in self._chunks:
            yield c
        self._done.set_result(None)
        await asyncio.Event().wait()


class ReplayHost(Host):
    """Answers the GPU count and replays `chunks` as the stream; nothing else."""

    def __init__(self, name: str, chunks: list[str], gpus: int) -> None:
        self.name = name
        self.chunks = chunks
        self.gpus = gpus
        self.done: asyncio.Future[None] | None = None

    @property
    def connected(self) -> bool:
        return True

    async def connect(self) -> None:
        pass

    async def run(self, command: str, *, timeout: float | None = 30.0, stdin: str | None = None) -> CommandResult:
        return CommandResult(0, "".join(f"{i}\n" for i in range(self.gpus)), "")

    @asynccontextmanager
    async def stream(self, command: str) -> AsyncIterator[LineStream]:
        assert self.done is not None
        yield _Replay(self.chunks, self.done)

    def stream_bytes(self, command: str) -> Any:
        raise NotImplementedError

    async def wait_closed(self) -> BaseException | None:
        await asyncio.Event().wait()
        return None

    async def close(self) -> None:
        pass


def recorded_frame(bench: bm.Bench) -> str:
    """The 8-GPU frame the fake prints each tick (rendered by the tests' fake nvidia-smi)."""
    inst = bench.session.instance("rec", capture=bench.capture, gpus=GPUS, start=False)
    m = re.search(r"^FRAME='([^']*)'$", bench._render_fake(inst), re.M)
    assert m is not None
    return m[1]


async def run_parse(frame: str, args: argparse.Namespace) -> dict[str, list[float]]:
    frames = args.parse_frames
    out: dict[str, list[float]] = {"assembler": [], "monitor+fleet": []}
    for _ in range(args.windows):
        # FrameAssembler alone, the chunk as the stream delivers it
        asm = nvsmi.FrameAssembler(clock=time.time)
        asm.expected = GPUS
        got = 0
        c0 = time.process_time()
        for _ in range(frames):
            for out_ in feed_chunk(asm, frame):
                if isinstance(out_, GpuFrame):
                    got += 1
        c1 = time.process_time()
        assert got == frames, got
        out["assembler"].append(1e6 * (c1 - c0) / frames)
        # the monitor's GPU loop and the fleet's view, over a replay
        host = ReplayHost("replay", [frame] * frames, GPUS)
        host.done = asyncio.get_running_loop().create_future()
        seen = [0]

        def on_change(name: str, e: object, seen: list[int] = seen) -> None:
            if isinstance(e, GpuFrameReceived):
                seen[0] += 1

        fleet = Fleet([(InstanceConfig(name="replay", host="127.0.0.1"), host)], on_change=on_change)
        mon = fleet.monitors["replay"]
        c0 = time.process_time()
        task = asyncio.create_task(mon._gpu_loop())
        await host.done
        c1 = time.process_time()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert seen[0] == frames, seen
        out["monitor+fleet"].append(1e6 * (c1 - c0) / frames)
    return out


def feed_chunk(asm: nvsmi.FrameAssembler, chunk: str) -> list[object]:
    """What FrameAssembler makes of one chunk, whichever API this checkout has."""
    if hasattr(asm, "feed_chunk"):
        return list(asm.feed_chunk(chunk))
    return [o for line in chunk.split("\n") if (o := asm.feed(line)) is not None]


# ------------------------------------------------------------------------------ report


def row(mode: str, n: int | str, ws: list[dict[str, float]]) -> dict[str, Any]:
    us = [w["us_per_sample"] for w in ws]
    med = statistics.median(us)
    r = {
        "mode": mode,
        "code": CODE,
        "n": n,
        "us_per_sample_median": round(med, 1),
        "us_per_sample_windows": [round(x, 1) for x in us],
        "cpu_s_per_host_hour": round(med * 3600 / 1e6, 2),
        "loadavg": [w["loadavg"] for w in ws],
        "samples": [w["samples"] for w in ws],
        "expected": [w["expected"] for w in ws],
        "cpu_pct": [round(w["cpu_pct"], 2) for w in ws],
    }
    if "us_user" in ws[0]:  # os.times(): 10 ms ticks, so only a rough split (JSON only)
        r["us_user_median"] = round(statistics.median(w["us_user"] for w in ws), 1)
        r["us_sys_median"] = round(statistics.median(w["us_sys"] for w in ws), 1)
    if any(w.get("chunks_per_sample") for w in ws):
        r["chunks_per_sample"] = round(statistics.median(w["chunks_per_sample"] for w in ws), 2)
    print(
        f"{mode:<20} N={n!s:<3} {med:8.1f} µs/sample  {r['cpu_s_per_host_hour']:6.2f} CPU-s/host-h  "
        + f"windows {r['us_per_sample_windows']}  samples {r['samples']}/{r['expected']}  load {r['loadavg']}",
        flush=True,
    )
    return r


async def amain(args: argparse.Namespace) -> list[dict[str, Any]]:
    modes = args.modes.split(",")
    print(f"# gpu_tui from {Path(gpu_tui.__file__).parent}; load average {Path('/proc/loadavg').read_text().strip()}")
    bench = bm.Bench(None, GPUS)
    bm.CHEAP_FAKE = FORKLESS_FAKE
    results = []
    prof = cProfile.Profile() if args.profile else None
    try:
        if "parse" in modes:
            frame = recorded_frame(bench)
            parsed = await run_parse(frame, args)
            for name, us in parsed.items():
                results.append(
                    row(
                        f"parse {name}",
                        "-",
                        [
                            {
                                "us_per_sample": u,
                                "samples": args.parse_frames,
                                "expected": args.parse_frames,
                                "cpu_pct": 100.0,
                                "loadavg": loadavg(),
                            }
                            for u in us
                        ],
                    )
                )
        for n in (int(x) for x in args.sizes.split(",")):
            if "bare" in modes:
                results.append(row("bare asyncssh", n, await run_bare(bench, n, args)))
            if "fleet" in modes:
                name = "fleet+watch" if args.with_watch else "fleet (gpu stream)"
                results.append(row(name, n, await run_fleet(bench, n, args, prof)))
    finally:
        bench.cleanup()
    if prof is not None:
        prof.dump_stats(args.profile)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    return results


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="8,32")
    ap.add_argument("--modes", default="parse,bare,fleet", help="any of parse, bare, fleet (comma-separated)")
    ap.add_argument("--seconds", type=float, default=20.0, help="length of one window")
    ap.add_argument("--windows", type=int, default=3, help="windows per configuration (the median is printed)")
    ap.add_argument("--parse-frames", type=int, default=20000, help="frames per parse window")
    ap.add_argument("--with-watch", action="store_true", help="fleet: keep the watch loop running too")
    ap.add_argument("--profile", metavar="PATH", help="cProfile the fleet windows; stats to PATH (inflates CPU)")
    ap.add_argument(
        "--ciphers",
        metavar="ALGS",
        help="asyncssh encryption_algs for every connection (e.g. "
        "aes128-gcm@openssh.com); default: asyncssh's order, chacha20-poly1305 first",
    )
    ap.add_argument("--code", metavar="DIR", help="measure the gpu_tui package in DIR (another checkout)")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args()
    if args.ciphers:
        from gpu_tui.remote.ssh import SshHost

        plain_options = SshHost._options

        def options(self: SshHost) -> dict[str, object]:
            return {**plain_options(self), "encryption_algs": args.ciphers.split(",")}

        SshHost._options = options
    results = asyncio.run(amain(args))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
