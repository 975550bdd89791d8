#!/usr/bin/env python3
"""The dashboard under load: CPU, RSS and key-to-repaint latency of a real `gpu-tui` process.

The dashboard runs as its own process (``.venv/bin/gpu-tui --config CFG``) in a real terminal
(a private tmux server, 160x45). The instances it watches are simulated by gpu-tui's demo
servers (in-process asyncssh servers on loopback answering the monitor's nvidia-smi and
host-stats probes, ``gpu_tui.demo.start_fleet``), run by a SEPARATE process (this script's
``_serve`` subcommand), so their CPU is not counted as the dashboard's. Every instance is the
demo's 8-GPU H100 profile (the ``runpod-h100x8`` profile, renamed, no training log, never
flaky), reached through the app's real SSH path (pinned host keys, password login).

Figures:

1. load: N = 32 instances x 8 GPUs streaming at 1 Hz (``refresh_seconds = 1``). After every
   instance's GPU stream is running and a warm-up, over a fixed window (``--seconds``,
   default 60): the dashboard process's CPU as % of one core (utime+stime from
   /proc/PID/stat) and its RSS (VmRSS at the window's start and end, and the high-water mark
   VmHWM, from /proc/PID/status). RSS grows over time (the 600-sample GPU histories alone take
   10 minutes at 1 Hz to fill), so a long window (``--seconds 900``) tells more than the default.
   Also, for context: the demo servers' CPU, the whole machine's busy %, and the GPU frames
   the servers wrote in the window vs N x window.
2. key to repaint, under that load: ``j`` / ``k`` alternately via ``tmux send-keys``; after
   each press ``tmux capture-pane -p`` is polled until the GPU panel's heading (the line
   ``NAME  root@127.0.0.1:PORT  online ...`` under the instance table) names the newly selected
   instance. Latency = from just before ``send-keys`` starts until the end of the first capture
   that shows it (an upper bound: it includes the tmux client's start for send-keys, a few
   ms); the poll period is reported as the resolution. Presses are spaced by a random
   0.2-0.5 s so they land at every phase of the 1 Hz update bursts.
3. cold start: for 8 loopback instances (same profile), from spawning ``gpu-tui`` (the
   ``tmux new-session`` call) until every one of the 8 instance rows shows a utilisation
   (``NN%``) on screen; p50 over ``--cold-runs`` fresh dashboard processes (the demo servers
   and the tmux server stay up; Python's files are in the page cache after the first run).

The dashboard speaks ``--lang`` (default en); a comma-separated list runs the load phase once
per entry, in that order, each with fresh servers and the same window, so languages are
compared on the same machine state (``--lang en,zh-CN,en,zh-CN`` interleaves them); the load
average is printed at each window's start and end. The screen is read in the language shown
(the table's header, the state word, ``N/N online``), from the shipped catalog.

This is a measurement script, not a test: it prints figures and asserts nothing about time.
Needs tmux. Run from the repository root::

    .venv/bin/python benchmarks/bench_dashboard.py --quick       # smoke: ~40 s
    .venv/bin/python benchmarks/bench_dashboard.py               # 60 s window, ~2 min
    .venv/bin/python benchmarks/bench_dashboard.py --skip-cold --lang en,zh-CN,en,zh-CN

Isolation: the dashboard gets HOME, XDG_CONFIG_HOME / XDG_DATA_HOME / XDG_STATE_HOME /
XDG_CACHE_HOME in a temporary directory (its known_hosts, log and ssh config live there; the
real user's files are never read or written), no SSH agent, a null keyring, and the passwords
as ``GPU_TUI_PASSWORD_<NAME>`` from a mode-600 env file sourced by a wrapper script (never on a
command line). Cleanup: the tmux server (its own socket in the temp dir), the server process
and the temp dir are removed at the end, on failure, on Ctrl-C and on SIGTERM; the server
process also exits by itself when this script dies.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import platform
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from procfs import cpu_model, machine_cpu, proc_cpu_ticks, proc_mem_mib, proc_wchar  # noqa: E402  (benchmarks/)

CLK_TCK = os.sysconf("SC_CLK_TCK")
COLS, ROWS = 160, 45
HEADING = re.compile(r"^\s*(\S+)  root@127\.0\.0\.1:\d+  ")
PROFILE_BASE = "runpod-h100x8"  # the demo's 8-GPU profile
TEMP_PREFIX = "gpu-tui-bench-dash-"


def instance_names(n: int, prefix: str) -> list[str]:
    return [f"{prefix}{i:02d}" for i in range(n)]


@dataclass(frozen=True)
class Words:
    """What the benchmark looks for on screen, in the dashboard's language (its shipped catalog)."""

    lang: str
    header: str
    """The instance table's first header word: the first paint."""
    online: str
    fleet_online: str
    """`{online}/{total} online`, to be formatted."""
    detail_marker: str
    """The detail screen's first chart title."""

    @classmethod
    def of(cls, lang: str) -> Words:
        from gpu_tui.config.language import catalog
        from gpu_tui.core.i18n import normalise_language

        language = normalise_language(lang)
        if language is None:
            raise SystemExit(f"bench_dashboard: unknown language {lang!r}")
        t = catalog(language).gettext
        return cls(language, t("Instance"), t("online"), t("{online}/{total} online"), t("GPU utilisation %"))

    def all_online(self, n: int) -> str:
        return self.fleet_online.format(online=n, total=n)


# ------------------------------------------------------------------------------ the server process


def serve(args: argparse.Namespace) -> int:
    """``_serve``: start the demo servers, write config / env / known_hosts, serve until killed."""
    import asyncio
    import dataclasses
    import logging

    from gpu_tui.config.secrets import env_var_name
    from gpu_tui.demo import DEFAULT_PROFILES, start_fleet
    from gpu_tui.demo import server as demo_server

    logging.basicConfig(level=logging.WARNING, filename=str(Path(args.workdir) / "servers.log"))
    workdir = Path(args.workdir)
    base = next(p for p in DEFAULT_PROFILES if p.name == PROFILE_BASE)
    profiles = [
        dataclasses.replace(base, name=name, flaky=False) for name in instance_names(args.instances, args.prefix)
    ]

    # count what the servers write: GPU stream ticks (one 8-GPU frame each) and exec requests
    counts: dict[str, dict[str, int]] = {p.name: {"frames": 0, "execs": 0} for p in profiles}
    real_plan = demo_server.plan

    def counting_plan(command: str, sim: Any) -> Any:
        program = real_plan(command, sim)
        c = counts[sim.profile.name]
        c["execs"] += 1
        tick = program.tick
        if tick is not None and command.lstrip().startswith("nvidia-smi") and "--query-gpu" in command:

            def counted(i: int, _tick: Any = tick, _c: dict[str, int] = c) -> str:
                _c["frames"] += 1
                return _tick(i)

            program.tick = counted
        return program

    demo_server.plan = counting_plan  # this process only: the bench's own servers

    async def main() -> None:
        parent = os.getppid()
        fleet = await start_fleet(profiles, workdir=workdir / "fleet", seed=args.seed)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            loop.add_signal_handler(sig, stop.set)
        try:
            lines = ["[settings]", "refresh_seconds = 1.0", 'currency = "¥"', ""]
            for inst in fleet.settings.instances:
                lines += [
                    "[[instances]]",
                    f'name = "{inst.name}"',
                    f'host = "{inst.host}"',
                    f"port = {inst.port}",
                    f'user = "{inst.user}"',
                    f"hourly_rate = {inst.hourly_rate}",
                    f'provider = "{inst.provider}"',
                    "",
                ]
            (workdir / "config.toml").write_text("\n".join(lines), encoding="utf-8")
            env = workdir / "passwords.env"
            fd = os.open(env, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                for name, pw in fleet.passwords.items():
                    f.write(f"{env_var_name(name)}={shlex.quote(pw)}\n")
            (workdir / "known_hosts").write_text(fleet.known_hosts_text, encoding="utf-8")
            print("READY", flush=True)
            status = workdir / "status.json"
            while not stop.is_set():
                if os.getppid() != parent:  # the benchmark died (SIGKILL?) without cleaning up
                    _orphan_cleanup(args)
                    break
                doc = {
                    name: {
                        "connections": len(s.connections),
                        "streams": s.streams,
                        **counts[name],
                    }
                    for name, s in fleet.servers.items()
                }
                tmp = status.with_suffix(".tmp")
                tmp.write_text(json.dumps(doc))
                os.replace(tmp, status)
                with contextlib.suppress(asyncio.TimeoutError, TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
        finally:
            await fleet.close()

    asyncio.run(main())
    return 0


def _orphan_cleanup(args: argparse.Namespace) -> None:
    """What the dead benchmark would have done: stop its tmux server (and so the dashboard), rm its dir."""
    if args.tmux_socket:
        subprocess.run(["tmux", "-S", args.tmux_socket, "kill-server"], capture_output=True)
    if args.cleanup_dir and Path(args.cleanup_dir).name.startswith(TEMP_PREFIX):
        shutil.rmtree(args.cleanup_dir, ignore_errors=True)


# ------------------------------------------------------------------------------ measuring


def pct(values: list[float], q: float) -> float:
    """The median for q = 50, else the nearest-rank percentile (q in 0..100)."""
    s = sorted(values)
    if not s:
        return float("nan")
    if q == 50:
        return statistics.median(s)
    k = max(0, min(len(s) - 1, math.ceil(q / 100 * len(s)) - 1))
    return s[k]


# ------------------------------------------------------------------------------ the harness


class Harness:
    """Temp dir, a private tmux server, the server processes; ``close`` removes all of it."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=TEMP_PREFIX))
        self.home = self.dir / "home"
        self.xdg = {
            k: self.dir / "xdg" / k.split("_")[1].lower()
            for k in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME")
        }
        for d in (self.home, *self.xdg.values()):
            d.mkdir(parents=True, exist_ok=True)
        self.data_dir = self.xdg["XDG_DATA_HOME"] / "gpu-tui"
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_file = self.xdg["XDG_STATE_HOME"] / "gpu-tui" / "log" / "gpu-tui.log"
        self.socket = self.dir / "tmux.sock"
        self.servers: list[subprocess.Popen[str]] = []
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TMUX_TMPDIR": str(self.dir),
            **{k: str(v) for k, v in self.xdg.items()},
        }
        self._tmux_started = False
        self.spawned = 0

    # ----- tmux
    def tmux(self, *argv: str, check: bool = True) -> str:
        self.spawned += 1  # a tmux client process: bench_dashboard_sshd subtracts ours from ns_last_pid
        p = subprocess.run(["tmux", "-S", str(self.socket), *argv], env=self.env, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(argv)}: {p.stderr.strip()}")
        return p.stdout

    def start_tmux(self) -> None:
        # a holder session keeps the server up, so a dashboard's start never includes tmux's own
        self.tmux(
            "-f", "/dev/null", "new-session", "-d", "-s", "hold", "-x", str(COLS), "-y", str(ROWS), "sleep 2147483647"
        )
        self._tmux_started = True
        self.tmux("set-option", "-g", "default-terminal", "tmux-256color")
        self.tmux("set-option", "-g", "history-limit", "0")

    def capture(self, session: str) -> str:
        return self.tmux("capture-pane", "-p", "-t", session, check=False)

    def pane_pid(self, session: str) -> int:
        return int(self.tmux("display-message", "-p", "-t", session, "#{pane_pid}").strip())

    # ----- servers
    def start_servers(self, n: int, prefix: str, seed: int, tag: str = "") -> tuple[Path, subprocess.Popen[str]]:
        work = self.dir / f"fleet-{prefix.rstrip('-')}-{n}{tag}"
        work.mkdir()
        err_file = open(work / "servers.err", "w")
        p = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "_serve",
                "--instances",
                str(n),
                "--prefix",
                prefix,
                "--workdir",
                str(work),
                "--seed",
                str(seed),
                "--tmux-socket",
                str(self.socket),
                "--cleanup-dir",
                str(self.dir),
            ],
            stdout=subprocess.PIPE,
            stderr=err_file,
            text=True,
            start_new_session=True,  # Ctrl-C goes to us; we stop it
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        err_file.close()  # the child has its own copy
        self.servers.append(p)
        assert p.stdout is not None
        line = p.stdout.readline()  # blocks until READY (or the process died)
        if line.strip() != "READY":
            err = (work / "servers.err").read_text()[-2000:]
            raise RuntimeError(f"demo servers did not start: {line!r}\n{err}")
        # the app's own known_hosts (data dir), for this fleet only
        shutil.copyfile(work / "known_hosts", self.data_dir / "known_hosts")
        return work, p

    def stop_server(self, p: subprocess.Popen[str]) -> None:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                p.send_signal(signal.SIGTERM)
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if p.stdout is not None:
            p.stdout.close()

    # ----- the dashboard
    def wrapper(self, work: Path, profile_out: Path | None, lang: str = "en") -> Path:
        """A script that sources the passwords and execs the dashboard (so pane pid = its pid)."""
        python = Path(sys.executable)
        gpu_tui = python.with_name("gpu-tui")  # the console script next to this interpreter
        if not gpu_tui.exists():
            raise RuntimeError(f"no {gpu_tui}: run this with the venv's python (pip install -e .)")
        q = shlex.quote
        cfg = work / "config.toml"
        options = f"--lang {q(lang)} --config {q(str(cfg))}"
        if profile_out is None:
            cmd = f"exec {q(str(gpu_tui))} {options}"
        else:
            cmd = f"exec {q(str(python))} -m cProfile -o {q(str(profile_out))} {q(str(gpu_tui))} {options}"
        script = work / ("run-profiled.sh" if profile_out else "run.sh")
        script.write_text(
            "#!/bin/sh\n"
            "unset SSH_AUTH_SOCK SSH_AGENT_PID\n"
            "export COLORTERM=truecolor PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring\n"
            f"set -a; . {shlex.quote(str(work / 'passwords.env'))}; set +a\n"
            f"cd {shlex.quote(str(REPO))}\n"
            f"{cmd}\n"
        )
        os.chmod(script, 0o700)
        return script

    def start_dashboard(self, session: str, script: Path) -> float:
        """Start it; returns the monotonic time just before the tmux call."""
        t0 = time.monotonic()
        self.tmux("new-session", "-d", "-s", session, "-x", str(COLS), "-y", str(ROWS), str(script))
        return t0

    def dashboard_pid(self, session: str, timeout: float = 10.0) -> int:
        deadline = time.monotonic() + timeout
        while True:
            pid = self.pane_pid(session)
            with contextlib.suppress(OSError):  # the wrapper shell has exec'd the interpreter
                if os.path.basename(os.readlink(f"/proc/{pid}/exe")).startswith("python"):
                    return pid
            if time.monotonic() > deadline:
                raise RuntimeError(f"no gpu-tui process in the pane (pid {pid})")
            time.sleep(0.01)

    def stop_dashboard(self, session: str, pid: int | None, graceful: bool = True) -> bool:
        """``q`` and wait for a clean exit (a cProfile dump needs one), then kill the session."""
        clean = False
        if graceful and pid is not None:
            self.tmux("send-keys", "-t", session, "q", check=False)
            deadline = time.monotonic() + 15.0
            while time.monotonic() < deadline:
                if not os.path.exists(f"/proc/{pid}") or _is_zombie(pid):
                    clean = True
                    break
                time.sleep(0.05)
        self.tmux("kill-session", "-t", session, check=False)
        return clean

    def close(self) -> None:
        if self._tmux_started:
            self.tmux("kill-server", check=False)
        for p in self.servers:
            with contextlib.suppress(Exception):
                self.stop_server(p)
        shutil.rmtree(self.dir, ignore_errors=True)


def _is_zombie(pid: int) -> bool:
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return True
    return raw[raw.rindex(b")") + 2 :].split()[0] in (b"Z", b"X")


def read_status(work: Path) -> dict[str, dict[str, int]]:
    try:
        return json.loads((work / "status.json").read_text())
    except (OSError, ValueError):
        return {}


def row_has_data(screen: str, name: str, online: str = "online") -> bool:
    """The instance's table row shows a utilisation: `NAME  online  8  93%  ...` (`online` in the
    dashboard's language)."""
    return re.search(rf"^\s*{re.escape(name)}\s+{re.escape(online)}\s+\d+\s+\d+%", screen, re.M) is not None


def selected_in_panel(screen: str) -> str | None:
    for line in screen.splitlines():
        m = HEADING.match(line)
        if m:
            return m.group(1)
    return None


def wait_until(pred: Any, timeout: float, what: str, h: Harness, session: str, every: float = 0.25) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            screen = h.capture(session)
            raise RuntimeError(f"timed out after {timeout:g} s waiting for {what}; screen:\n{screen}")
        time.sleep(every)


# ------------------------------------------------------------------------------ phases


def key_probe(h: Harness, session: str, pid: int, pair: list[str], samples: int, seed: int) -> dict[str, Any]:
    """`j` / `k` alternately between the first two instances, `samples` presses spaced by a random
    0.2-0.5 s: from just before `send-keys` to the end of the first capture whose GPU panel heading
    names the newly selected instance (an upper bound; `key_ms_lower_*` is the start of the capture
    before it, a lower bound)."""
    names = pair
    lat: list[float] = []
    lower: list[float] = []
    send_ms: list[float] = []
    poll_periods: list[float] = []
    rng = random.Random(seed)
    current = selected_in_panel(h.capture(session))
    if current != names[0]:
        raise RuntimeError(f"expected {names[0]} selected at start, the panel shows {current!r}")
    cpu_k0, k0 = proc_cpu_ticks(pid), time.monotonic()
    for i in range(samples):
        key, want = ("j", names[1]) if i % 2 == 0 else ("k", names[0])
        time.sleep(rng.uniform(0.2, 0.5))
        t_send = time.monotonic()
        h.tmux("send-keys", "-t", session, key)
        send_ms.append(1000 * (time.monotonic() - t_send))
        prev_start = t_send
        starts: list[float] = []
        while True:
            s = time.monotonic()
            screen = h.capture(session)
            e = time.monotonic()
            starts.append(s)
            if selected_in_panel(screen) == want:
                break
            prev_start = s
            if e - t_send > 10.0:
                raise RuntimeError(f"key {key!r}: {want} not shown after 10 s:\n{screen}")
        lat.append(1000 * (e - t_send))
        lower.append(1000 * max(0.0, prev_start - t_send))
        poll_periods += [b - a for a, b in zip(starts, starts[1:], strict=False)]
    cpu_k1, k1 = proc_cpu_ticks(pid), time.monotonic()
    poll_ms = 1000 * (sum(poll_periods) / len(poll_periods)) if poll_periods else float("nan")
    return dict(
        key_samples=len(lat),
        key_ms_p50=round(pct(lat, 50), 1),
        key_ms_p95=round(pct(lat, 95), 1),
        key_ms_max=round(max(lat), 1),
        key_ms_lower_p50=round(pct(lower, 50), 1),
        key_ms_lower_p95=round(pct(lower, 95), 1),
        send_keys_ms_p50=round(pct(send_ms, 50), 1),
        poll_ms_mean=round(poll_ms, 1),
        key_phase_cpu_pct_of_core=round(100 * (cpu_k1 - cpu_k0) / CLK_TCK / (k1 - k0), 2),
    )


def phase_cold(h: Harness, args: argparse.Namespace, words: Words) -> dict[str, Any]:
    n = args.cold_instances
    names = instance_names(n, "cold-")
    work, server = h.start_servers(n, "cold-", args.seed)
    script = h.wrapper(work, None, words.lang)
    runs: list[dict[str, Any]] = []
    try:
        for run in range(args.cold_runs):
            session = f"cold{run}"
            t0 = h.start_dashboard(session, script)
            polls = 0
            first_row = first_screen = None
            deadline = t0 + args.cold_timeout
            pid = None
            try:
                while True:
                    screen = h.capture(session)
                    t = time.monotonic()
                    polls += 1
                    if first_screen is None and words.header in screen:  # the table's header: first paint
                        first_screen = t - t0
                    ok = [row_has_data(screen, nm, words.online) for nm in names]
                    if first_row is None and any(ok):
                        first_row = t - t0
                    if all(ok):
                        break
                    if t > deadline:
                        raise RuntimeError(
                            f"cold start: not all {n} rows live after {args.cold_timeout:g} s:\n{screen}"
                        )
                    time.sleep(0.005)
                elapsed = t - t0
                pid = h.dashboard_pid(session)
                rss, _ = proc_mem_mib(pid)
                cpu = proc_cpu_ticks(pid) / CLK_TCK
            finally:
                h.stop_dashboard(session, pid, graceful=pid is not None)
            runs.append(
                {
                    "all_rows_s": round(elapsed, 3),
                    "first_row_s": round(first_row or elapsed, 3),
                    "first_screen_s": round(first_screen or elapsed, 3),
                    "polls": polls,
                    "poll_ms": round(1000 * elapsed / polls, 1),
                    "cpu_s": round(cpu, 2),
                    "rss_mib": round(rss, 1),
                }
            )
            print(
                f"#   cold run {run + 1}: all {n} rows live after {elapsed:.2f} s (first paint "
                f"{runs[-1]['first_screen_s']:.2f} s, first row {runs[-1]['first_row_s']:.2f} s; "
                f"CPU {cpu:.2f} s, RSS {rss:.0f} MiB)",
                flush=True,
            )
            time.sleep(0.5)
    finally:
        h.stop_server(server)
    alls = [r["all_rows_s"] for r in runs]
    return {
        "lang": words.lang,
        "instances": n,
        "runs": runs,
        "all_rows_s_p50": round(pct(alls, 50), 3),
        "all_rows_s_min": round(min(alls), 3),
        "all_rows_s_max": round(max(alls), 3),
        "first_row_s_p50": round(pct([r["first_row_s"] for r in runs], 50), 3),
        "first_screen_s_p50": round(pct([r["first_screen_s"] for r in runs], 50), 3),
        "poll_ms_mean": round(sum(r["poll_ms"] for r in runs) / len(runs), 1),
        "cpu_s_p50": round(pct([r["cpu_s"] for r in runs], 50), 2),
    }


def phase_load(h: Harness, args: argparse.Namespace, words: Words, run: int = 0) -> dict[str, Any]:
    n = args.instances
    names = instance_names(n, "h100x8-")
    work, server = h.start_servers(n, "h100x8-", args.seed, tag=f"-{run}")
    prof_out = Path(args.profile).resolve() if args.profile and run == 0 else None
    prof_tmp = h.dir / "dashboard.prof" if prof_out else None
    script = h.wrapper(work, prof_tmp, words.lang)
    session = f"load{run}"
    pid = None
    out: dict[str, Any] = {"lang": words.lang, "instances": n, "gpus_per_instance": 8, "profiled": bool(prof_out)}
    try:
        t0 = h.start_dashboard(session, script)
        pid = h.dashboard_pid(session)

        def all_streaming() -> bool:
            st = read_status(work)
            return len(st) == n and all(s["frames"] > 0 for s in st.values())

        wait_until(all_streaming, args.warmup_timeout, f"all {n} GPU streams", h, session)
        out["all_streaming_s"] = round(time.monotonic() - t0, 2)
        wait_until(lambda: words.all_online(n) in h.capture(session), 30, words.all_online(n), h, session)
        print(
            f"# load [{words.lang}]: {n} instances x 8 GPUs streaming after {out['all_streaming_s']:.1f} s; "
            f"warm-up {args.warmup:g} s, then a {args.seconds:g} s window ...",
            flush=True,
        )
        time.sleep(args.warmup)

        # ----- CPU / RSS window (nothing else from us runs meanwhile)
        tmux_pid = int(h.tmux("display-message", "-p", "#{pid}").strip())
        st0, srv0, mach0 = read_status(work), proc_cpu_ticks(server.pid), machine_cpu()
        tmx0, io0 = proc_cpu_ticks(tmux_pid), proc_wchar(pid)
        rss0, _ = proc_mem_mib(pid)
        load0 = os.getloadavg()[0]
        cpu0, w0 = proc_cpu_ticks(pid), time.monotonic()
        time.sleep(args.seconds)
        cpu1, w1 = proc_cpu_ticks(pid), time.monotonic()
        load1 = os.getloadavg()[0]
        tmx1, io1 = proc_cpu_ticks(tmux_pid), proc_wchar(pid)
        st1, srv1, mach1 = read_status(work), proc_cpu_ticks(server.pid), machine_cpu()
        rss, hwm = proc_mem_mib(pid)
        window = w1 - w0
        frames = sum(st1[k]["frames"] - st0[k]["frames"] for k in st1)
        per_host = [st1[k]["frames"] - st0[k]["frames"] for k in st1]
        execs = sum(st1[k]["execs"] - st0[k]["execs"] for k in st1)
        out.update(
            loadavg_window_start=round(load0, 2),
            loadavg_window_end=round(load1, 2),
            window_s=round(window, 2),
            cpu_s=round((cpu1 - cpu0) / CLK_TCK, 2),
            cpu_pct_of_core=round(100 * (cpu1 - cpu0) / CLK_TCK / window, 2),
            rss_mib=round(rss, 1),
            rss_start_mib=round(rss0, 1),
            rss_hwm_mib=round(hwm, 1),
            servers_cpu_pct_of_core=round(100 * (srv1 - srv0) / CLK_TCK / window, 1),
            tmux_cpu_pct_of_core=round(100 * (tmx1 - tmx0) / CLK_TCK / window, 1),
            written_kib_per_s=round((io1 - io0) / 1024 / window, 1),
            machine_busy_pct=round(100 * (mach1[0] - mach0[0]) / max(1, mach1[1] - mach0[1]), 1),
            others_cpu_pct_of_core=round(
                100 * (mach1[0] - mach0[0]) / max(1, mach1[1] - mach0[1]) * (os.cpu_count() or 1)
                - 100 * ((cpu1 - cpu0) + (srv1 - srv0) + (tmx1 - tmx0)) / CLK_TCK / window,
                1,
            ),
            frames_served=frames,
            frames_expected=round(n * window),
            frames_per_host_min=min(per_host),
            frames_per_host_max=max(per_host),
            execs_in_window=execs,
            connections_end=sum(s["connections"] for s in st1.values()),
        )
        print(
            f"#   CPU {out['cpu_pct_of_core']:.2f}% of a core, RSS {rss:.1f} MiB "
            f"(servers {out['servers_cpu_pct_of_core']}%, machine busy {out['machine_busy_pct']}%, "
            f"frames {frames}/{out['frames_expected']}, load average {load0:.2f} -> {load1:.2f})",
            flush=True,
        )

        # ----- key press to repaint, same load
        print(f"# key to repaint: {args.key_samples} presses of j/k ...", flush=True)
        out.update(key_probe(h, session, pid, names[:2], args.key_samples, args.seed))
        print(
            f"#   p50 {out['key_ms_p50']} ms, p95 {out['key_ms_p95']} ms (poll period {out['poll_ms_mean']} ms)",
            flush=True,
        )
    finally:
        clean = h.stop_dashboard(session, pid, graceful=pid is not None)
        out["clean_exit"] = clean
        h.stop_server(server)
    out["log_warnings"] = _log_problems(h.log_file)
    if prof_out and prof_tmp:
        if prof_tmp.exists():
            shutil.copyfile(prof_tmp, prof_out)
            out["profile"] = str(prof_out)
        else:
            out["profile"] = None
    return out


def _log_problems(path: Path) -> int:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    return sum(1 for line in text.splitlines() if " WARNING " in line or " ERROR " in line)


# ------------------------------------------------------------------------------ reporting


def machine_info() -> dict[str, Any]:
    model = cpu_model()
    import asyncssh
    import textual

    tmux_v = subprocess.run(["tmux", "-V"], capture_output=True, text=True).stdout.strip()
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "kernel": platform.release(),
        "python": platform.python_version(),
        "textual": getattr(textual, "__version__", "?"),
        "asyncssh": asyncssh.__version__,
        "tmux": tmux_v,
        "loadavg_start": os.getloadavg()[0],
    }


def report(info: dict[str, Any], loads: list[dict[str, Any]], cold: dict[str, Any] | None) -> list[str]:
    lines = []
    for load in loads:
        ok = lambda c: "ok" if c else "MISSED"  # noqa: E731
        lines += [
            f"load [{load['lang']}]: {load['instances']} instances x {load['gpus_per_instance']} GPUs at 1 Hz, "
            f"window {load['window_s']:.1f} s after {load['all_streaming_s']:.1f} s to stream + warm-up"
            + ("  [under cProfile: inflated]" if load["profiled"] else "")
            + f"; load average {load['loadavg_window_start']:.2f} -> {load['loadavg_window_end']:.2f}",
            f"  dashboard CPU   {load['cpu_pct_of_core']:6.2f} % of one core   (target < 6 %: "
            f"{ok(load['cpu_pct_of_core'] < 6)})",
            f"  dashboard RSS   {load['rss_mib']:6.1f} MiB (peak {load['rss_hwm_mib']:.1f}, "
            f"{load['rss_start_mib']:.1f} at the window's start)   "
            f"(target < 250 MB: {ok(load['rss_hwm_mib'] * 1.048576 < 250)})",
            f"  context: it wrote {load['written_kib_per_s']} KiB/s (terminal + sockets); tmux server "
            f"{load['tmux_cpu_pct_of_core']} % of a core; demo servers {load['servers_cpu_pct_of_core']} % "
            f"of a core, machine busy "
            f"{load['machine_busy_pct']} % of {info['cpus']} CPUs (everything else on it: "
            f"{load['others_cpu_pct_of_core']} % of a core); frames served {load['frames_served']}/"
            f"{load['frames_expected']} (per host {load['frames_per_host_min']}..{load['frames_per_host_max']}), "
            f"execs in window {load['execs_in_window']}, connections {load['connections_end']}, "
            f"log warnings {load['log_warnings']}",
            f"key to repaint ({load['key_samples']} presses, j/k): p50 {load['key_ms_p50']} ms, "
            f"p95 {load['key_ms_p95']} ms, max {load['key_ms_max']} ms   (target p95 < 50 ms: "
            f"{ok(load['key_ms_p95'] < 50)})",
            f"  resolution: capture-pane poll period {load['poll_ms_mean']} ms (lower bounds p50 "
            f"{load['key_ms_lower_p50']} / p95 {load['key_ms_lower_p95']} ms); includes send-keys "
            f"(p50 {load['send_keys_ms_p50']} ms); dashboard CPU while pressing "
            f"{load['key_phase_cpu_pct_of_core']} % of a core",
        ]
        if load.get("profiled"):
            lines.append(f"  profile: {load.get('profile')}")
    if len({load["lang"] for load in loads}) > 1:
        by_lang: dict[str, list[float]] = {}
        for load in loads:
            by_lang.setdefault(load["lang"], []).append(load["cpu_pct_of_core"])
        lines.append(
            "dashboard CPU by language (% of one core, each window): "
            + "; ".join(
                f"{lang} {', '.join(f'{v:.2f}' for v in values)} (mean {statistics.mean(values):.2f})"
                for lang, values in by_lang.items()
            )
        )
    if cold:
        runs = ", ".join(f"{r['all_rows_s']:.2f}" for r in cold["runs"])
        lines += [
            f"cold start to first data [{cold['lang']}], {cold['instances']} loopback instances x 8 GPUs: p50 "
            f"{cold['all_rows_s_p50']:.2f} s until every row shows a utilisation "
            f"(runs: {runs} s; first paint p50 {cold['first_screen_s_p50']:.2f} s, first row p50 "
            f"{cold['first_row_s_p50']:.2f} s; poll {cold['poll_ms_mean']} ms; "
            f"dashboard CPU by then p50 {cold['cpu_s_p50']} s)",
        ]
    return lines


# ------------------------------------------------------------------------------ main


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["_serve"]:
        sp = argparse.ArgumentParser(prog="bench_dashboard.py _serve")
        sp.add_argument("--instances", type=int, required=True)
        sp.add_argument("--prefix", required=True)
        sp.add_argument("--workdir", required=True)
        sp.add_argument("--seed", type=int, default=0)
        sp.add_argument("--tmux-socket", default=None, help="kill this tmux server if the benchmark dies")
        sp.add_argument("--cleanup-dir", default=None, help="remove this dir if the benchmark dies")
        return serve(sp.parse_args(argv[1:]))

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=None, help="load window (default 60; --quick 15)")
    ap.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="seconds after every stream is running before the window (default 10; --quick 5)",
    )
    ap.add_argument("--quick", action="store_true", help="smoke run: 15 s window, 20 key presses, 2 cold starts")
    ap.add_argument("--instances", type=int, default=32, help="instances for the load (default 32, 8 GPUs each)")
    ap.add_argument("--key-samples", type=int, default=None, help="key presses (default 60; --quick 20)")
    ap.add_argument("--cold-runs", type=int, default=None, help="cold starts (default 5; --quick 2)")
    ap.add_argument("--cold-instances", type=int, default=8, help="instances for the cold start (default 8)")
    ap.add_argument("--cold-timeout", type=float, default=60.0, help="give up a cold start after this long")
    ap.add_argument("--warmup-timeout", type=float, default=120.0, help="max seconds for every stream to start")
    ap.add_argument("--skip-load", action="store_true", help="only the cold start")
    ap.add_argument("--skip-cold", action="store_true", help="only the load figures")
    ap.add_argument(
        "--profile",
        metavar="PATH",
        help="run the load dashboard under cProfile and write the stats here (inflates its CPU)",
    )
    ap.add_argument("--seed", type=int, default=0, help="demo fleet seed")
    ap.add_argument(
        "--lang",
        default="en",
        help="the dashboard's language (en, zh-CN); comma-separated: one load phase per entry, in "
        "this order (en,zh-CN,en,zh-CN interleaves); the cold start uses the first",
    )
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    args.seconds = args.seconds if args.seconds is not None else (15.0 if args.quick else 60.0)
    args.warmup = args.warmup if args.warmup is not None else (5.0 if args.quick else 10.0)
    args.key_samples = args.key_samples if args.key_samples is not None else (20 if args.quick else 60)
    args.cold_runs = args.cold_runs if args.cold_runs is not None else (2 if args.quick else 5)
    if not 2 <= args.instances <= 64 or not 1 <= args.cold_instances <= 64:
        ap.error("--instances must be 2..64 and --cold-instances 1..64")
    languages = [Words.of(lang) for lang in args.lang.split(",") if lang.strip()]
    if not languages:
        ap.error("--lang needs a language")
    if shutil.which("tmux") is None:
        print("bench_dashboard: needs tmux", file=sys.stderr)
        return 2

    info = machine_info()
    print(
        f"# bench_dashboard {info['date']}  {info['cpus']} CPUs ({info['cpu_model']}), Linux {info['kernel']}, "
        f"Python {info['python']}, textual {info['textual']}, asyncssh {info['asyncssh']}, {info['tmux']}; "
        f"load average at start {info['loadavg_start']:.2f}",
        flush=True,
    )
    print(
        f"# terminal: tmux {COLS}x{ROWS}, TERM=tmux-256color, COLORTERM=truecolor; demo servers in a separate process",
        flush=True,
    )

    def on_term(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)  # also when started with SIGINT ignored (a background job)
    h = Harness()
    loads: list[dict[str, Any]] = []
    cold = None
    try:
        h.start_tmux()
        if not args.skip_cold:
            print(f"# cold start: {args.cold_runs} runs, {args.cold_instances} instances ...", flush=True)
            cold = phase_cold(h, args, languages[0])
        if not args.skip_load:
            for run, words in enumerate(languages):
                loads.append(phase_load(h, args, words, run))
    except KeyboardInterrupt:
        print("# interrupted: tmux, servers and temp dir removed; nothing reported", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        h.close()
        signal.signal(signal.SIGINT, signal.default_int_handler)
    info["loadavg_end"] = os.getloadavg()[0]
    print()
    print("\n".join(report(info, loads, cold)))
    print(f"# load average at end {info['loadavg_end']:.2f}")
    if args.json:
        doc = {
            "benchmark": "bench_dashboard",
            "machine": info,
            "settings": {
                "seconds": args.seconds,
                "warmup": args.warmup,
                "terminal": f"{COLS}x{ROWS}",
                "hz": 1.0,
                "profile": PROFILE_BASE,
            },
            "load": loads[0] if loads else None,
            "loads": loads,
            "cold": cold,
        }
        Path(args.json).write_text(json.dumps(doc, indent=2) + "\n")
        print(f"# figures written to {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
