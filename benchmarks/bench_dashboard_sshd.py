#!/usr/bin/env python3
"""The dashboard against REAL OpenSSH sshd instances, beside the floor, on a fleet whose GPUs
move: CPU (% of one core) at start-up and in steady state, RSS, reconnects, new processes,
instances online over time and key to paint, for N instances x 8 GPUs at 1 Hz.

Each instance is its own sshd on loopback (tests/sshd.py, as the integration tier) with a
fork-free fake nvidia-smi (8 GPUs). `--frames live` (the default) is tests/livefake.py's: every
sample moves (utilisation random-walks per GPU, power follows it, temperature and memory drift,
the compute-apps list changes every minute), as a GPU under a training load does, so every frame
misses the dashboard's row cache. `--frames static` (bench_watch.FORKLESS_FAKE: one frame
repeated) is kept as the named comparison row; `--frames live,static` runs both.

Clients (`--clients`, default both, in this order):
- `gpu-tui`: a real `gpu-tui --config CFG` process in a private tmux server's pane
  (bench_dashboard.Harness, 160x45), logging in with the session's client key;
- `floor`: benchmarks/floor_client.py in a pane of the same size: one asyncssh connection and
  one `nvidia-smi --query-gpu=... -lms 1000` channel per instance, lines split, a plain Textual
  screen (one text row per instance, 8 Sparklines for instance 0) repainted at 2 Hz.
For each N and frames kind the clients run one after the other, each on FRESH instances (new
sshd processes, new logs, same seeds, so the same walks): not interleaved, so one client's
start-up never lands in the other's window. The ratio gpu-tui / floor is printed per N.

Figures per run:
- start-up CPU: from the client's start until 30 s after all N instances are online (the
  screen's `N/N online`), as % of one core; `all_online_s`: start to that;
- steady CPU: `--windows` windows of `--seconds` each (median, min, max);
- RSS at the end (VmRSS, VmHWM);
- reconnects: connections the instances' sshd accepted (`Accepted publickey` in each sshd.log,
  LogLevel VERBOSE) beyond the first per instance, over the whole run;
- new processes per instance per minute: exact on the instance side (strace following
  clone/clone3/fork/vfork in every process of the instances' sshd trees over the first window),
  and machine-wide (the change of /proc/sys/kernel/ns_last_pid over all windows, minus the tmux
  clients this script started; meaningless on a shared machine, kept for a quiet one);
- instances online over time: the screen's `k/N online` every `--sample-every` s (min over the
  steady windows, and the series);
- key to paint (gpu-tui only, `--key-samples`, 0 to skip): bench_dashboard.key_probe, `j` / `k`
  between the first two instances under this load.

Needs root (sshd), tmux and strace. From the repository root::

    .venv/bin/python benchmarks/bench_dashboard_sshd.py --sizes 8 --seconds 10 --windows 1   # smoke
    .venv/bin/python benchmarks/bench_dashboard_sshd.py --sizes 8,32,64 --json live.json
    .venv/bin/python benchmarks/bench_dashboard_sshd.py --sizes 32 --frames live,static
    .venv/bin/python benchmarks/bench_dashboard_sshd.py --sizes 32 --clients gpu-tui --lang zh-CN
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
import shlex  # noqa: E402
import signal  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import bench_dashboard as bd  # noqa: E402
import bench_metrics as bm  # noqa: E402
import bench_watch as bw  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")
CLIENTS = ("gpu-tui", "floor")
STARTUP_AFTER_ONLINE_S = 30.0
ACCEPTED = re.compile(rb"Accepted (?:publickey|password|keyboard-interactive\S*) for ")


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


def online_pattern(fleet_online: str) -> re.Pattern[str]:
    """`{online}/{total} online` (in the dashboard's language) as a regex with two groups."""
    parts = re.split(r"(\{online\}|\{total\})", fleet_online)
    return re.compile("".join(r"(\d+)" if p in ("{online}", "{total}") else re.escape(p) for p in parts))


def online_count(screen: str, pattern: re.Pattern[str]) -> int | None:
    m = pattern.search(screen)
    return int(m.group(1)) if m else None


def accepted_connections(insts: list) -> list[int]:
    out = []
    for inst in insts:
        try:
            out.append(len(ACCEPTED.findall(Path(inst.log_path).read_bytes())))
        except OSError:
            out.append(0)
    return out


def write_config(work: Path, insts: list, lang: str | None) -> None:
    lines = ["[settings]", "refresh_seconds = 1.0", "connect_timeout_seconds = 20"]
    if lang:
        lines.append(f'language = "{lang}"')
    for i in insts:
        lines += [
            "",
            "[[instances]]",
            f'name = "{i.name}"',
            f'host = "{i.host}"',
            f"port = {i.port}",
            f'identity_file = "{i.client_key_path}"',
            "hourly_rate = 1.5",
        ]
    (work / "config.toml").write_text("\n".join(lines) + "\n")
    (work / "passwords.env").write_text("")


TRAIN_SCRIPT = """\
import math, random, sys, time
# a training log as HF Trainer prints it: a dict per logging step, every 0.2 s
rng = random.Random(1)
step = 0
while True:
    step += 10
    loss = 2.5 * math.exp(-step / 4000) + 0.3 + rng.uniform(-0.05, 0.05)
    print({"loss": round(loss, 4), "learning_rate": 5e-05, "epoch": round(step / 1000, 2), "step": step}, flush=True)
    time.sleep(0.2)
"""


def start_training(h: bd.Harness, work: Path, inst: object) -> None:
    """A running job with a growing log on the first instance, started with `gpu-tui run` (as
    a user does), so the log screen has something to open."""
    script = work / "train.py"
    script.write_text(TRAIN_SCRIPT)
    gpu_tui = Path(sys.executable).with_name("gpu-tui")
    argv = [str(gpu_tui), "--config", str(work / "config.toml"), "run", inst.name, "--name", "train"]  # type: ignore[attr-defined]
    argv += ["--", "python3", "-u", str(script)]
    env = {**h.env, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"gpu-tui run: {p.stderr.strip() or p.stdout.strip()}")


class PaneStream:
    """The pane's output as tmux receives it (`pipe-pane` into a FIFO), each chunk timestamped:
    when gpu-tui wrote a screen, without capture-pane's polling on top."""

    def __init__(self, h: bd.Harness, session: str, work: Path) -> None:
        self.h, self.session = h, session
        fifo = work / "pane.fifo"
        os.mkfifo(fifo)
        self.chunks: list[tuple[float, bytes]] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(fifo,), daemon=True)
        self._thread.start()
        h.tmux("pipe-pane", "-o", "-t", session, f"cat > {shlex.quote(str(fifo))}")

    def _read(self, fifo: Path) -> None:
        with open(fifo, "rb", buffering=0) as f:
            while chunk := f.read(65536):
                with self._lock:
                    self.chunks.append((time.monotonic(), chunk))

    def mark(self) -> int:
        with self._lock:
            return len(self.chunks)

    def arrival(self, since: int, marker: bytes) -> float | None:
        """When the chunk that completed `marker` arrived, counting chunks from index `since`."""
        with self._lock:
            got = self.chunks[since:]
        seen = b""
        for at, chunk in got:
            seen += chunk
            if marker in seen:
                return at
        return None

    def close(self) -> None:
        self.h.tmux("pipe-pane", "-t", self.session)  # no command: the pipe closes, cat exits
        self._thread.join(5)


def screen_probe(
    h: bd.Harness,
    session: str,
    key: str,
    shown: Callable[[str], bool],
    back: Callable[[str], bool],
    samples: int,
    stream: PaneStream | None = None,
    marker: bytes | None = None,
) -> dict:
    """`key` opens a screen, Escape closes it: from just before send-keys to the first capture
    that shows it (an upper bound, as key_probe), `samples` times; returns p50/p95 in ms, and
    with `stream`, `stream_*`: to the arrival of the output holding `marker` (what the terminal
    got, without the capture's polling)."""
    lat: list[float] = []
    streamed: list[float] = []
    for _ in range(samples):
        time.sleep(0.3)
        since = stream.mark() if stream is not None else 0
        t = time.monotonic()
        h.tmux("send-keys", "-t", session, key)
        while not shown(h.capture(session)):
            if time.monotonic() - t > 10.0:
                raise RuntimeError(f"key {key!r}: the screen did not open in 10 s:\n{h.capture(session)}")
        lat.append(1000 * (time.monotonic() - t))
        if stream is not None and marker is not None:
            at = stream.arrival(since, marker)
            if at is not None:
                streamed.append(1000 * (at - t))
        h.tmux("send-keys", "-t", session, "Escape")
        t_back = time.monotonic()
        while not back(h.capture(session)):
            if time.monotonic() - t_back > 10.0:
                raise RuntimeError(f"Escape after {key!r}: the dashboard did not come back:\n{h.capture(session)}")
    out = {"p50": round(bd.pct(lat, 50), 1), "p95": round(bd.pct(lat, 95), 1), "max": round(max(lat), 1)}
    out["all"] = [round(x) for x in lat]
    if streamed:
        out.update(stream_p50=round(bd.pct(streamed, 50), 1), stream_p95=round(bd.pct(streamed, 95), 1))
        out["stream_all"] = [round(x) for x in streamed]
    return out


def floor_wrapper(work: Path, insts: list) -> Path:
    known = work / "known_hosts"
    known.write_text("".join(f"{i.host_public_key_line}\n" for i in insts))
    fleet = {
        "known_hosts": str(known),
        "instances": [
            {"name": i.name, "host": i.host, "port": i.port, "user": "root", "key": str(i.client_key_path)}
            for i in insts
        ],
    }
    (work / "fleet.json").write_text(json.dumps(fleet))
    q = shlex.quote
    script = work / "floor.sh"
    script.write_text(
        "#!/bin/sh\n"
        "unset SSH_AUTH_SOCK SSH_AGENT_PID\n"
        "export COLORTERM=truecolor\n"
        f"cd {q(str(REPO))}\n"
        f"exec {q(sys.executable)} {q(str(REPO / 'benchmarks' / 'floor_client.py'))} {q(str(work / 'fleet.json'))}\n"
    )
    os.chmod(script, 0o700)
    return script


def one_run(h: bd.Harness, bench: bm.Bench, n: int, client: str, frames: str, args: argparse.Namespace) -> dict:
    bench.frames, bench.fake_text = frames, None
    insts = bench.make(f"{'d' if client == 'gpu-tui' else 'f'}{n}-", n, None)
    listeners = [i._proc.pid for i in insts]
    work = h.dir / f"{client}-{frames}-{n}"
    work.mkdir()
    names = [i.name for i in insts]
    words = bd.Words.of(args.lang or "en") if client == "gpu-tui" else bd.Words.of("en")
    pattern = online_pattern(words.fleet_online)
    session = f"{client.replace('-', '')}{frames}{n}"
    pid = None
    try:
        if client == "gpu-tui":
            write_config(work, insts, args.lang)
            (h.data_dir / "known_hosts").write_text("".join(f"{i.host_public_key_line}\n" for i in insts))
            if args.key_samples > 0:
                start_training(h, work, insts[0])
            script = h.wrapper(work, None, args.lang or "en")
        else:
            script = floor_wrapper(work, insts)
        runs = accepted_connections(insts)  # `gpu-tui run`'s own connection is not a reconnect
        t0 = h.start_dashboard(session, script)
        pid = h.dashboard_pid(session)
        spy_dir = Path(args.py_spy).resolve() if args.py_spy else None
        spy = Sampler(spy_dir, pid, f"{client}-{frames}-{n}-startup")
        series: list[tuple[float, int | None]] = []
        first_data = all_online = None
        last_sample = -1.0
        while time.monotonic() - t0 < args.online_timeout:
            screen = h.capture(session)
            now = time.monotonic() - t0
            k = online_count(screen, pattern)
            if now - last_sample >= 1.0:
                series.append((round(now, 1), k))
                last_sample = now
            if first_data is None and all(row_has_data(screen, nm) for nm in names[: min(n, 12)]):
                first_data = now
            if k == n:
                all_online = now
                break
            time.sleep(0.25)
        # all online can come before the first rows show a utilisation (64 x 8): wait for them too
        while first_data is None and time.monotonic() - t0 < args.online_timeout:
            if all(row_has_data(h.capture(session), nm) for nm in names[: min(n, 12)]):
                first_data = time.monotonic() - t0
            else:
                time.sleep(0.05)
        t_end_startup = t0 + (all_online if all_online is not None else args.online_timeout) + STARTUP_AFTER_ONLINE_S
        while time.monotonic() < t_end_startup:
            time.sleep(min(args.sample_every, max(0.0, t_end_startup - time.monotonic())))
            series.append((round(time.monotonic() - t0, 1), online_count(h.capture(session), pattern)))
        startup = 100 * proc_cpu_s(pid) / (time.monotonic() - t0)
        spy.stop()
        spy = Sampler(spy_dir, pid, f"{client}-{frames}-{n}-steady")
        windows: list[float] = []
        steady_online: list[int | None] = []
        counter = bw.ForkCounter(bw.tree_pids(listeners))
        time.sleep(1.0)  # strace attached
        spawned0, last0, w_all0, load0 = h.spawned, bw.last_pid(), time.monotonic(), bw.loadavg()
        forks = 0
        forks_window = 1.0
        for k in range(args.windows):
            w0, c0 = time.monotonic(), proc_cpu_s(pid)
            while time.monotonic() - w0 < args.seconds:
                time.sleep(min(args.sample_every, max(0.0, args.seconds - (time.monotonic() - w0))))
                count = online_count(h.capture(session), pattern)
                steady_online.append(count)
                series.append((round(time.monotonic() - t0, 1), count))
            windows.append(100 * (proc_cpu_s(pid) - c0) / (time.monotonic() - w0))
            if k == 0:
                spy.stop()
                forks = counter.stop()
                forks_window = time.monotonic() - w0
        steady_s = time.monotonic() - w_all0
        machine_new = bw.last_pid() - last0 - (h.spawned - spawned0)
        screen = h.capture(session)
        if not Path(f"/proc/{pid}/status").exists() or "VmRSS" not in Path(f"/proc/{pid}/status").read_text():
            raise RuntimeError(f"{client} exited during the measurement; its screen:\n{screen}")
        rss, hwm = proc_rss_mib(pid)
        keys: dict = {}
        if client == "gpu-tui" and args.key_samples > 0 and n >= 2:
            try:
                keys = bd.key_probe(h, session, pid, names[:2], args.key_samples, args.seed)
            except RuntimeError as e:
                keys = {"key_probe_error": str(e).splitlines()[0]}
            on_dashboard = pattern.search
            opens = (
                ("detail", "Enter", lambda sc: words.detail_marker in sc, words.detail_marker.encode()),
                ("logs", "l", lambda sc: any(line.startswith(" $ ") for line in sc.splitlines()[:3]), b"$ python3"),
            )
            stream = PaneStream(h, session, work)
            try:
                for what, key, shown, marker in opens:
                    try:
                        r = screen_probe(
                            h,
                            session,
                            key,
                            shown,
                            lambda sc: bool(on_dashboard(sc)),
                            args.key_samples // 3,
                            stream,
                            marker,
                        )
                        keys.update({f"{what}_ms_{k}": v for k, v in r.items()})
                    except RuntimeError as e:
                        keys[f"{what}_probe_error"] = "\n".join(str(e).splitlines()[:8])
            finally:
                stream.close()
        accepted = [c - ran for c, ran in zip(accepted_connections(insts), runs, strict=True)]
        return {
            "client": client,
            "frames": frames,
            "n": n,
            "lang": args.lang or "en",
            "loadavg_start": load0,
            "loadavg_end": bw.loadavg(),
            "all_online_s": round(all_online, 2) if all_online is not None else None,
            "first_data_s": round(first_data, 2) if first_data is not None else None,
            "startup_cpu_pct": round(startup, 2),
            "startup_s": round(t_end_startup - t0, 1),
            "steady_cpu_pct_median": round(statistics.median(windows), 2),
            "steady_cpu_pct_min": round(min(windows), 2),
            "steady_cpu_pct_max": round(max(windows), 2),
            "windows": [round(w, 2) for w in windows],
            "window_s": args.seconds,
            "rss_mib": round(rss, 1),
            "rss_hwm_mib": round(hwm, 1),
            "reconnects": sum(max(0, c - 1) for c in accepted),
            "instances_never_connected": sum(1 for c in accepted if c == 0),
            "new_procs_per_inst_min": round(forks / n / (forks_window / 60), 2),
            "new_procs_per_inst_min_machine": round(machine_new / n / (steady_s / 60), 2),
            "online_min_steady": min((c for c in steady_online if c is not None), default=None),
            "online_samples_unread": sum(1 for c in steady_online if c is None),
            "online_series": series,
            "screen_has_polling_note": "polling fallback" in screen,
            **keys,
        }
    finally:
        if pid is not None:
            h.stop_dashboard(session, pid, graceful=False)
        bench.drop(insts)


class Sampler:
    """py-spy sampling one phase of the client (`--py-spy DIR`): a sampling profiler attached by
    pid, non-blocking, so the figures it runs beside are barely moved (cProfile doubles them).
    Its collapsed stacks go to DIR/<client>-<n>-<phase>.txt; `top_own` sums them by leaf."""

    def __init__(self, out_dir: Path | None, pid: int, name: str) -> None:
        self.path = out_dir / f"{name}.txt" if out_dir else None
        self.proc: subprocess.Popen[bytes] | None = None
        if self.path is not None:
            spy = Path(sys.executable).with_name("py-spy")
            argv = [
                str(spy),
                "record",
                "-p",
                str(pid),
                "--nonblocking",
                "--function",
                "-r",
                "50",
                "-f",
                "raw",
                "-o",
                str(self.path),
            ]
            self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGINT)
            self.proc.wait(timeout=30)


def top_own(path: Path, limit: int = 25) -> list[tuple[str, float]]:
    """The leaf frames of py-spy's collapsed stacks, by share of samples."""
    own: dict[str, int] = {}
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        leaf = stack.rsplit(";", 1)[-1]
        own[leaf] = own.get(leaf, 0) + int(count)
        total += int(count)
    ranked = sorted(own.items(), key=lambda kv: -kv[1])[:limit]
    return [(leaf, round(100 * c / max(1, total), 1)) for leaf, c in ranked]


def ratios(results: list[dict]) -> list[dict]:
    out = []
    for r in results:
        if r["client"] != "gpu-tui":
            continue
        floor = next(
            (f for f in results if f["client"] == "floor" and f["n"] == r["n"] and f["frames"] == r["frames"]), None
        )
        if floor is None:
            continue

        def ratio(key: str, _r: dict = r, _f: dict = floor) -> float | None:
            return round(_r[key] / _f[key], 2) if _f[key] else None

        out.append(
            {
                "n": r["n"],
                "frames": r["frames"],
                "steady_cpu_x": ratio("steady_cpu_pct_median"),
                "startup_cpu_x": ratio("startup_cpu_pct"),
                "rss_x": ratio("rss_mib"),
            }
        )
    return out


def print_table(results: list[dict]) -> None:
    print(
        "client   frames   N  start-up %  steady % (min-max)     RSS MiB  online   reconn  procs/inst/min"
        "  key p95 ms  load"
    )
    for r in results:
        key = r.get("key_ms_p95", "-")
        print(
            f"{r['client']:<8} {r['frames']:<6} {r['n']:>3}  {r['startup_cpu_pct']:>9.2f}  "
            f"{r['steady_cpu_pct_median']:>6.2f} ({r['steady_cpu_pct_min']:.2f}-{r['steady_cpu_pct_max']:.2f})  "
            f"{r['rss_mib']:>9.1f}  {r['online_min_steady']}/{r['n']:<4} {r['reconnects']:>6}  "
            f"{r['new_procs_per_inst_min']:>6.2f} / {r['new_procs_per_inst_min_machine']:.1f}  {key!s:>10}  "
            f"{r['loadavg_start']}-{r['loadavg_end']}"
        )
    for x in ratios(results):
        print(
            f"gpu-tui / floor at N={x['n']} ({x['frames']}): steady CPU x{x['steady_cpu_x']}, "
            f"start-up CPU x{x['startup_cpu_x']}, RSS x{x['rss_x']}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="8,32")
    ap.add_argument("--seconds", type=float, default=30.0, help="one steady-state window")
    ap.add_argument("--windows", type=int, default=3, help="steady-state windows (the median is the figure)")
    ap.add_argument("--frames", default="live", help="live, static or both (live,static): one row each")
    ap.add_argument("--clients", default=",".join(CLIENTS), help="gpu-tui, floor or both (in the order given)")
    ap.add_argument("--seed", type=int, default=1, help="the live fake's walks, and the key probe's spacing")
    ap.add_argument("--key-samples", type=int, default=30, help="key presses for key to paint (0: skip)")
    ap.add_argument("--sample-every", type=float, default=5.0, help="seconds between `k/N online` readings")
    ap.add_argument("--online-timeout", type=float, default=120.0, help="give up waiting for N/N online")
    ap.add_argument("--lang", default=None, help="settings.language for the dashboard (default: English)")
    ap.add_argument("--json", metavar="PATH")
    ap.add_argument("--py-spy", metavar="DIR", help="sample each client with py-spy (pip install py-spy)")
    args = ap.parse_args()
    frames_kinds = [f for f in args.frames.split(",") if f]
    clients = [c for c in args.clients.split(",") if c]
    if not frames_kinds or any(f not in bm.FRAMES for f in frames_kinds):
        ap.error(f"--frames: a comma-separated list of {bm.FRAMES}")
    if not clients or any(c not in CLIENTS for c in clients):
        ap.error(f"--clients: a comma-separated list of {CLIENTS}")
    bench = bm.Bench(None, 8, seed=args.seed)
    bm.CHEAP_FAKE = bw.FORKLESS_FAKE
    h = bd.Harness()
    results = []
    try:
        h.start_tmux()
        for n in (int(x) for x in args.sizes.split(",")):
            for frames in frames_kinds:
                for client in clients:
                    r = one_run(h, bench, n, client, frames, args)
                    print(json.dumps({k: v for k, v in r.items() if k != "online_series"}), flush=True)
                    for phase in ("startup", "steady") if args.py_spy else ():
                        path = Path(args.py_spy) / f"{client}-{frames}-{n}-{phase}.txt"
                        if path.exists():
                            print(f"py-spy {client} {phase}: {top_own(path, 15)}", flush=True)
                    results.append(r)
    finally:
        h.close()
        bench.cleanup()
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": results, "ratios": ratios(results)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
