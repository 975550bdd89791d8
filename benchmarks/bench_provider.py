#!/usr/bin/env python3
"""Provider accounts: (1) `gpu-tui start NAME` from the command to exit, SSH answering, against
a loopback RunPod API (tests/providerservers.py) whose start brings a real sshd up
(tests/sshd.py); (2) provider API calls per minute while the dashboard is open on a fleet with
RunPod and Vast.ai instances and tokens (Textual's headless run, in this process).

`--boot-polls K`: the pod reports its endpoint only after K reads (a real pod takes seconds to
minutes; gpu-tui polls every 3 s). Needs root and /usr/sbin/sshd. Measures; asserts nothing::

    python benchmarks/bench_provider.py                 # 5 starts at 0 and 2 polls, 60 s dashboard
    python benchmarks/bench_provider.py --minutes 5
"""

from __future__ import annotations

import argparse
import asyncio
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
from providerservers import ProviderServer, provider_env  # noqa: E402
from sshhelp import cli_env  # noqa: E402


def one_start(session: sshd_lib.SshdSession, run: int, boot_polls: int) -> tuple[float, str]:
    box = session.instance(f"start-{boot_polls}-{run}")
    box.start()
    box.stop()
    srv = ProviderServer("runpod", token="k").start()
    srv.add("pod", state="stopped", ssh=(box.host, box.port), on_start=box.start, boot_polls=boot_polls)
    try:
        with tempfile.TemporaryDirectory() as tmp_dir:
            tmp = Path(tmp_dir)
            cfg = tmp / "config.toml"
            cfg.write_text(
                f'[[instances]]\nname = "pod"\nhost = "pending.invalid"\nprovider = "runpod"\n'
                f'provider_id = "pod"\nidentity_file = "{box.client_key_path}"\n'
            )
            env = {**cli_env(tmp), **provider_env(srv)}
            t0 = time.monotonic()
            res = subprocess.run(
                [sys.executable, "-m", "gpu_tui", "--config", str(cfg), "start", "pod"],
                capture_output=True,
                text=True,
                env=env,
                timeout=300,
            )
            took = time.monotonic() - t0
            return took, (res.stdout + res.stderr).strip().splitlines()[-1]
    finally:
        srv.stop()
        box.kill()


async def dashboard_calls(seconds: float) -> tuple[int, dict[str, int]]:
    from gpu_tui.config.paths import Paths
    from gpu_tui.config.secrets import SecretStore
    from gpu_tui.config.settings import parse_settings
    from gpu_tui.ui.factory import build_app, config_source

    servers = {p: ProviderServer(p, token="k").start() for p in ("runpod", "vast")}
    for srv in servers.values():
        srv.add("1", state="running", ssh=("127.0.0.1", 1))
        for key, value in provider_env(srv).items():
            os.environ[key] = value
    text = "".join(
        f'[[instances]]\nname = "{p}-1"\nhost = "127.0.0.1"\nport = 1\nprovider = "{p}"\nprovider_id = "1"\n\n'
        for p in servers
    )
    settings = parse_settings(text)
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        paths = Paths(tmp / "c.toml", tmp / "data", tmp / "log", tmp / "no-ssh", tmp / "no-kh")
        paths.data_dir.mkdir(parents=True)
        secrets = SecretStore(environ={f"GPU_TUI_PASSWORD_PROVIDER_{p.upper()}": "k" for p in servers})
        app = build_app(config_source(settings, paths, secrets), settings)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause(seconds)
    for srv in servers.values():
        srv.stop()
    per = {p: len(s.seen) for p, s in servers.items()}
    return sum(per.values()), per


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--minutes", type=float, default=1.0)
    args = ap.parse_args()
    session = sshd_lib.SshdSession(password_user=False)
    try:
        for polls in (0, 2):
            results = [one_start(session, r, polls) for r in range(args.runs)]
            times = [t for t, _ in results]
            print(
                f"start -> SSH answers, pod ready after {polls} reads: median {statistics.median(times):.2f} s "
                f"(min {min(times):.2f}, max {max(times):.2f}); last line: {results[-1][1]}"
            )
    finally:
        session.cleanup()
    total, per = asyncio.run(dashboard_calls(args.minutes * 60))
    print(
        f"dashboard open {args.minutes:g} min, RunPod + Vast.ai tokens: {total} API calls "
        f"({total / args.minutes:.1f}/min; {per})"
    )


if __name__ == "__main__":
    main()
