#!/usr/bin/env python3
"""`gpu-tui forward` against a plain OpenSSH `ssh -L`: throughput and added latency on loopback.

One simulated instance (a real OpenSSH sshd, tests/sshd.py) on loopback; on the "instance side"
(this machine, as sshd sees it) two TCP servers: a source that sends the number of bytes asked
for, and an echo. Each is reached three ways, one after the other:

- ``direct``: no tunnel (the floor);
- ``gpu-tui``: `python -m gpu_tui forward bench SRC:0 ECHO:0` as a child process (its own
  asyncssh connection, the session's client key, pinned host key);
- ``openssh``: `ssh -N -L ... -L ...` with the same key and sshd.

Figures: download of ``--mb`` MiB (``--runs`` times; median MB/s), round trips of 64 bytes on
one open connection (median and p99; "added" = minus direct's median), connection set-up plus one
round trip (a browser opening a page: median), and the forwarding process's CPU seconds per GiB.

A measurement script, not a test: root and OpenSSH's server and client. Run::

    python benchmarks/bench_forward.py            # 256 MiB x 3, 2,000 round trips
    python benchmarks/bench_forward.py --mb 64 --runs 1 --trips 500
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
for p in (str(REPO), str(TESTS)):
    if p not in sys.path:
        sys.path.insert(0, p)

import sshd as sshd_lib  # noqa: E402  (tests/sshd.py)
from sshhelp import cli_env, config_text  # noqa: E402

MiB = 1024 * 1024
CHUNK = b"\0" * MiB
TICKS = os.sysconf("SC_CLK_TCK")


class _Source(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        try:
            want = int.from_bytes(_recv_exact(self.request, 8), "big")
        except ConnectionError:
            return  # a probe (gpu-tui's up-front check, the wait for a listener): nothing asked
        while want:
            n = min(want, len(CHUNK))
            self.request.sendall(CHUNK[:n])
            want -= n


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        while data := self.request.recv(65536):
            self.request.sendall(data)


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed early")
        data += chunk
    return data


def serve(handler: type[socketserver.BaseRequestHandler]) -> _Server:
    server = _Server(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def download(port: int, size: int) -> float:
    """Seconds to receive `size` bytes from the source through `port`."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        t0 = time.perf_counter()
        s.sendall(size.to_bytes(8, "big"))
        got = 0
        while got < size:
            chunk = s.recv(4 * MiB)
            if not chunk:
                raise ConnectionError(f"closed after {got} of {size} bytes")
            got += len(chunk)
        return time.perf_counter() - t0


def round_trips(port: int, trips: int) -> list[float]:
    msg = b"x" * 64
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.sendall(msg)
        _recv_exact(s, len(msg))  # the channel is open before timing starts
        times = []
        for _ in range(trips):
            t0 = time.perf_counter()
            s.sendall(msg)
            _recv_exact(s, len(msg))
            times.append(time.perf_counter() - t0)
    return times


def connects(port: int, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(b"ping")
            _recv_exact(s, 4)
        times.append(time.perf_counter() - t0)
    return times


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"forwarder exited {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"port {port} never listened")


class Bench:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.session = sshd_lib.SshdSession(password_user=False)
        self.inst = inst = self.session.instance("bench")
        self.config = root / "config.toml"
        # the tests' own config and environment: a clean HOME and XDG dirs, the host key trusted
        self.config.write_text(config_text([inst]))
        self.env = cli_env(root, known_hosts=inst.host_public_key_line + "\n")

    def start(self, way: str, src: int, echo: int) -> tuple[subprocess.Popen[bytes] | None, int, int]:
        """The forwarder for `way` and the local ports of the source and the echo."""
        if way == "direct":
            return None, src, echo
        if way == "gpu-tui":
            out = self.root / "forward.out"
            with open(out, "wb") as f:
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "gpu_tui",
                        "--config",
                        str(self.config),
                        "forward",
                        "bench",
                        f"{src}:0",
                        f"{echo}:0",
                    ],
                    stdout=f,
                    stderr=subprocess.DEVNULL,
                    env=self.env,
                )
            end = time.monotonic() + 30
            while len(out.read_text().splitlines()) < 2:
                if proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError("gpu-tui forward did not start")
                time.sleep(0.05)
            ports = [int(line.split()[0].rsplit(":", 1)[1]) for line in out.read_text().splitlines()[:2]]
            return proc, ports[0], ports[1]
        lsrc, lecho = sshd_lib.free_port(), sshd_lib.free_port()
        argv = [
            *self.inst.ssh_argv(),
            "-N",
            "-o",
            "ExitOnForwardFailure=yes",
            "-L",
            f"127.0.0.1:{lsrc}:localhost:{src}",
            "-L",
            f"127.0.0.1:{lecho}:localhost:{echo}",
            self.inst.host,
        ]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, env=self.env)
        wait_port(lsrc, proc)
        wait_port(lecho, proc)
        return proc, lsrc, lecho

    def measure(self, way: str, src: int, echo: int, args: argparse.Namespace) -> dict[str, Any]:
        proc, lsrc, lecho = self.start(way, src, echo)
        try:
            size = args.mb * MiB
            download(lsrc, MiB)  # warm-up: the channel path, the server's threads
            cpu0 = cpu_seconds(proc.pid) if proc else 0.0
            secs = [download(lsrc, size) for _ in range(args.runs)]
            cpu = (cpu_seconds(proc.pid) - cpu0) if proc else None
            rtt = round_trips(lecho, args.trips)
            conn = connects(lecho, args.connects)
        finally:
            if proc is not None:
                proc.send_signal(signal.SIGINT if way == "gpu-tui" else signal.SIGTERM)
                proc.wait(20)
        rtt_sorted = sorted(rtt)
        return {
            "way": way,
            "mb_per_s": round(args.mb * MiB / statistics.median(secs) / 1e6, 1),
            "rtt_median_us": round(statistics.median(rtt) * 1e6),
            "rtt_p99_us": round(rtt_sorted[int(len(rtt_sorted) * 0.99) - 1] * 1e6),
            "connect_median_ms": round(statistics.median(conn) * 1e3, 2),
            "cpu_s_per_gib": round(cpu / (args.mb * args.runs / 1024), 2) if cpu is not None else None,
        }

    def cleanup(self) -> None:
        old = signal.signal(signal.SIGTERM, signal.SIG_IGN)
        try:
            self.session.cleanup()
        finally:
            sshd_lib.kill_all_started()
            signal.signal(signal.SIGTERM, old)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=int, default=256, help="MiB per download (default 256)")
    ap.add_argument("--runs", type=int, default=3, help="downloads per way (default 3)")
    ap.add_argument("--trips", type=int, default=2000, help="64-byte round trips (default 2000)")
    ap.add_argument("--connects", type=int, default=200, help="connections opened (default 200)")
    ap.add_argument("--ways", default="direct,gpu-tui,openssh")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    source, echo = serve(_Source), serve(_Echo)
    with tempfile.TemporaryDirectory(prefix="bench-forward-") as tmp:
        bench = Bench(Path(tmp))
        try:
            rows = [
                bench.measure(w, source.server_address[1], echo.server_address[1], args) for w in args.ways.split(",")
            ]
        finally:
            bench.cleanup()
    base = next((r["rtt_median_us"] for r in rows if r["way"] == "direct"), None)
    for r in rows:
        r["rtt_added_us"] = r["rtt_median_us"] - base if base is not None else None
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'way':8} {'MB/s':>8} {'rtt med':>9} {'added':>7} {'rtt p99':>9} {'connect':>9} {'cpu s/GiB':>9}")
    for r in rows:
        cpu = "-" if r["cpu_s_per_gib"] is None else f"{r['cpu_s_per_gib']:.2f}"
        added = "-" if r["rtt_added_us"] is None else str(r["rtt_added_us"])
        print(
            f"{r['way']:8} {r['mb_per_s']:8.1f} {r['rtt_median_us']:7d}us {added:>5}us "
            f"{r['rtt_p99_us']:7d}us {r['connect_median_ms']:7.2f}ms {cpu:>9}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
