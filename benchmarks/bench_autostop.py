#!/usr/bin/env python3
"""Autostop latency: seconds from the idle threshold being reached to the shutdown.

For each check interval (``--checks``, default 1 s and the production 15 s) and ``--runs`` times:
a fresh simulated instance (real OpenSSH sshd on loopback, tests/sshd.py) with its fake GPU
busy (50%); the watchdog is armed through the same service the CLI uses (`services.autostop.arm`,
idle time ``--idle``); once it has logged a busy check, the GPU is set idle (0%) at time T. The
threshold is reached at T + idle. Reported per run:

- ``call``: the fake ``shutdown`` being called (what the watchdog controls) - (T + idle);
- ``off``: the instance powered off (the fake's 0.3 s delay, then it kills sshd) - (T + idle).

Expected: up to one check interval (the first check after T notices the idleness; the idle time
counts from that check), plus the time to run the shutdown line. The watchdog shortens its
last wait to the idle time left, so it never overshoots by a further interval.

The machine running this is assumed shared (builds, other tests): the CPU rule is lifted
(``cpu_busy_cores=1000``) so only the GPU decides. A measurement script, not a test. Needs
what the sshd test tier needs (root, /usr/sbin/sshd). Run::

    python benchmarks/bench_autostop.py                       # 3 runs at 1 s, 3 at 15 s: ~2.5 min
    python benchmarks/bench_autostop.py --checks 1 --runs 10  # ~1 min
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
for p in (str(REPO), str(TESTS)):
    if p not in sys.path:
        sys.path.insert(0, p)

import sshd as sshd_lib  # noqa: E402
from sshhelp import ssh_host  # noqa: E402

from gpu_tui.config.settings import InstanceConfig  # noqa: E402
from gpu_tui.services import autostop as svc  # noqa: E402


def busy_logged(inst: sshd_lib.SshdInstance) -> bool:
    log = inst.home() / ".gpu-tui" / "autostop.log"
    return log.exists() and " busy " in log.read_text(errors="replace")


async def one_run(session: sshd_lib.SshdSession, check: int, idle: int, tmp: Path) -> tuple[float, float]:
    inst = session.instance("bench")
    try:
        inst.set_utilization(50)
        cfg = InstanceConfig(name=inst.name, host=inst.host, port=inst.port)
        host = ssh_host(inst, tmp)
        await host.connect()
        await svc.arm(host, cfg, svc.AutostopPlan(idle_seconds=idle, check_seconds=check, cpu_busy_cores=1000.0))
        await host.close()
        deadline = time.monotonic() + check + 30
        while not busy_logged(inst):
            if time.monotonic() > deadline:
                raise RuntimeError("the watchdog logged no busy check")
            await asyncio.sleep(0.05)
        inst.set_utilization(0)
        reached = time.time() + idle
        inst.wait_powered_off(timeout=idle + check + 30)
        call = inst.shutdown_calls()[0]["time"]
        off = float((inst.dir / "powered_off").read_text())
        return call - reached, off - reached
    finally:
        inst.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--checks", default="1,15", help="check intervals in seconds, comma-separated (default 1,15)")
    ap.add_argument("--runs", type=int, default=3, help="runs per interval (default 3)")
    ap.add_argument("--idle", type=int, default=5, help="idle time in seconds (default 5)")
    args = ap.parse_args()
    session = sshd_lib.SshdSession(password_user=False)
    tmp = session.root / "bench-client"
    tmp.mkdir()
    try:
        print(f"idle time {args.idle}s; seconds from the idle threshold reached to the shutdown call / power-off")
        for check in (int(c) for c in args.checks.split(",")):
            results = [asyncio.run(one_run(session, check, args.idle, tmp)) for _ in range(args.runs)]
            calls = [c for c, _ in results]
            offs = [o for _, o in results]
            print(
                f"checks every {check:>2}s  call: "
                + " ".join(f"{c:5.2f}" for c in calls)
                + f"  (median {statistics.median(calls):.2f}, max {max(calls):.2f})"
                + f"   off: median {statistics.median(offs):.2f}, max {max(offs):.2f}"
            )
    finally:
        session.cleanup()
        sshd_lib.kill_all_started()
    return 0


if __name__ == "__main__":
    sys.exit(main())
