#!/usr/bin/env python3
"""`gpu-tui shutdown --all` over N instances: wall time of the real CLI, from start to exit.

Each instance is a real OpenSSH sshd on loopback (tests/sshd.py) whose fake `shutdown`, first
on its PATH, ends that instance's sessions and stops its sshd after `--delay` seconds (a real
box takes longer; 0.3 s is the fixture's default). The CLI connects to each instance, runs the
provider's shutdown, waits for the far end to close, and tries one fresh login, which must fail,
all in parallel. Prints the wall time per run and the median. Needs root and /usr/sbin/sshd,
like the sshd test tier. Measures; asserts nothing::

    python benchmarks/bench_shutdown.py            # 16 instances, 3 runs
    python benchmarks/bench_shutdown.py -n 32 --runs 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
for p in (str(REPO), str(TESTS)):
    if p not in sys.path:
        sys.path.insert(0, p)

import sshd as sshd_lib  # noqa: E402
from sshhelp import config_text  # noqa: E402


def one_run(session: sshd_lib.SshdSession, n: int, run: int, delay: float) -> float:
    fleet = [session.instance(f"r{run}-{i:02d}") for i in range(n)]
    for inst in fleet:
        inst.set_shutdown_delay(delay)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        cfg = tmp / "config.toml"
        cfg.write_text(config_text(fleet, connect_timeout=5.0))
        data = tmp / "data" / "gpu-tui"
        data.mkdir(parents=True)
        (data / "known_hosts").write_text("".join(f"{i.host_public_key_line}\n" for i in fleet))
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp),
            "XDG_DATA_HOME": str(tmp / "data"),
            "XDG_STATE_HOME": str(tmp / "state"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
        started = time.perf_counter()
        res = subprocess.run(
            [sys.executable, "-m", "gpu_tui", "--config", str(cfg), "shutdown", "--all", "--yes"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        took = time.perf_counter() - started
    stopped = res.stdout.count("stopped (verified")
    print(f"run {run}: {took:.2f} s wall, {stopped}/{n} verified stopped, exit {res.returncode}")
    if res.returncode != 0:
        print(res.stderr.strip())
    for inst in fleet:
        inst.kill()
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=16, help="instances (default 16)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--delay", type=float, default=0.3, help="seconds the fake shutdown waits before the instance dies")
    args = ap.parse_args()
    session = sshd_lib.SshdSession(password_user=False)
    try:
        times = [one_run(session, args.n, r, args.delay) for r in range(args.runs)]
    finally:
        session.cleanup()
        sshd_lib.kill_all_started()
    print(
        f"shutdown --all over {args.n} instances: median {statistics.median(times):.2f} s "
        f"(min {min(times):.2f}, max {max(times):.2f}; fake shutdown delay {args.delay:g} s)"
    )


if __name__ == "__main__":
    main()
