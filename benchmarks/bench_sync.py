#!/usr/bin/env python3
"""`gpu-tui sync push` cost: a fresh tree, then the same tree with one file changed.

Against one simulated instance on loopback (a real OpenSSH sshd, tests/sshd.py), a tree of
``--files`` files of random data (``--mb`` MiB in all, so compression cannot cheat) is pushed
with each method into an empty directory, then one file is rewritten (new random bytes, same
size) and the tree pushed again, then pushed once more unchanged. For every push: bytes that
crossed the network towards the instance (rsync's ``Total bytes sent``; gpu-tui's own counter
for SFTP), files sent, wall time of the whole command (process start, login, transfer) and the
CPU time of the local side (gpu-tui, rsync and the transport child).

Methods: ``rsync`` (gpu-tui's default: local rsync with gpu-tui's `_transport` as its remote
shell), ``sftp`` (``--sftp``), and for reference ``openssh`` (plain ``rsync -e ssh`` with the
same rsync flags, key auth; not something gpu-tui runs, it shows what the Python transport costs).

A measurement script, not a test. Needs what the sshd test tier needs (root, /usr/sbin/sshd,
rsync; ssh for the reference row) and ~3x ``--mb`` of free space under /tmp. Run::

    python benchmarks/bench_sync.py                 # 1 GiB in 200 files
    python benchmarks/bench_sync.py --mb 256 --files 50 --methods rsync,sftp
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
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

from gpu_tui.services.sync.rsync import PARTIAL_DIR, TIMEOUT  # noqa: E402

MiB = 1024 * 1024


def make_tree(root: Path, files: int, total_mb: int) -> list[Path]:
    size = total_mb * MiB // files
    paths = []
    for i in range(files):
        p = root / f"shard-{i // 50:02d}" / f"part-{i:04d}.bin"
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "wb") as f:
            left = size
            while left:
                n = min(left, 8 * MiB)
                f.write(os.urandom(n))
                left -= n
        paths.append(p)
    return paths


def child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


class Bench:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.session = sshd_lib.SshdSession(password_user=False)
        self.inst = self.session.instance("bench")
        inst = self.inst
        self.config = root / "config.toml"
        # the tests' own config and environment: a clean HOME and XDG dirs, the host key trusted
        self.config.write_text(config_text([inst]))
        self.env = cli_env(root, known_hosts=inst.host_public_key_line + "\n")

    def push(self, method: str, src: Path, dest: str) -> dict[str, Any]:
        cpu0, t0 = child_cpu(), time.perf_counter()
        if method == "openssh":
            target = self.inst.home() / dest
            target.mkdir(exist_ok=True)
            argv = [
                "rsync",
                "-rlptz",
                "--protect-args",
                "--no-inc-recursive",
                f"--partial-dir={PARTIAL_DIR}",
                f"--timeout={TIMEOUT}",
                "--stats",
                "-e",
                " ".join(self.inst.ssh_argv()),
                f"{src}/",
                f"{self.inst.host}:{target}/",
            ]
            res = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=3600)
            if res.returncode:
                raise RuntimeError(res.stderr)
            stats = {ln.split(":")[0]: ln.split(":")[1] for ln in res.stdout.splitlines() if ":" in ln}
            sent = int(stats["Total bytes sent"].replace(",", "").strip())
            files = int(stats["Number of regular files transferred"].replace(",", "").strip())
        else:
            argv = [
                sys.executable,
                "-m",
                "gpu_tui",
                "--config",
                str(self.config),
                "sync",
                "bench",
                "push",
                str(src),
                dest,
                "--json",
            ] + (["--sftp"] if method == "sftp" else [])
            res = subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=3600)
            if res.returncode:
                raise RuntimeError(res.stderr)
            doc = json.loads(res.stdout)
            if doc["method"] != method:
                raise RuntimeError(f"asked for {method}, got {doc['method']}")
            sent, files = doc["bytes_sent"], doc["files_sent"]
        wall = time.perf_counter() - t0
        return {
            "bytes_sent": sent,
            "files_sent": files,
            "wall_s": round(wall, 2),
            "local_cpu_s": round(child_cpu() - cpu0, 2),
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
    ap.add_argument("--mb", type=int, default=1024, help="MiB of random data in all (default 1024)")
    ap.add_argument("--files", type=int, default=200, help="number of files (default 200)")
    ap.add_argument("--methods", default="rsync,sftp,openssh", help="comma-separated: rsync, sftp, openssh")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    if "openssh" in methods and not shutil.which("ssh"):
        methods.remove("openssh")
    rsync_v = subprocess.run(["rsync", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(
        f"# bench_sync {time.strftime('%Y-%m-%d %H:%M')}  {os.cpu_count()} CPUs, Linux {platform.release()}, "
        f"Python {platform.python_version()}, {rsync_v.strip()}",
        flush=True,
    )
    root = Path(tempfile.mkdtemp(prefix="gpu-tui-bench-sync-"))
    bench: Bench | None = None
    rows: list[dict[str, Any]] = []
    try:
        bench = Bench(root)
        src = root / "src"
        t0 = time.perf_counter()
        paths = make_tree(src, args.files, args.mb)
        print(
            f"# tree: {args.files} files, {args.mb} MiB of random data (made in {time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
        changed = paths[len(paths) // 2]
        for method in methods:
            dest = f"dest-{method}"
            for step in ("fresh", "one changed", "unchanged"):
                if step == "one changed":
                    changed.write_bytes(os.urandom(changed.stat().st_size))
                row = {"method": method, "step": step, **bench.push(method, src, dest)}
                rows.append(row)
                print(
                    f"{method:8} {step:12} {row['files_sent']:4d} files  {row['bytes_sent'] / MiB:9.2f} MiB sent  "
                    f"{row['wall_s']:7.2f} s wall  {row['local_cpu_s']:6.2f} s local CPU",
                    flush=True,
                )
            shutil.rmtree(bench.inst.home() / dest, ignore_errors=True)
    except KeyboardInterrupt:
        print("# interrupted", file=sys.stderr)
        return 130
    finally:
        if bench is not None:
            bench.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    print(f"# changed file: {args.mb * MiB // args.files / MiB:.2f} MiB of {args.mb} MiB")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"benchmark": "bench_sync", "mb": args.mb, "files": args.files, "rows": rows}, indent=2) + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
