"""`gpu-tui shutdown NAME...|--all [--yes] [--no-sync]`: verified shutdown from a shell, in
parallel; an instance with sync configured has its results pulled first."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import InputError
from gpu_tui.remote.host import Host
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.ledger import Ledger
from gpu_tui.services.power import pull_before, shutdown_many

__all__ = ["run_shutdown"]


def _targets(args: argparse.Namespace, settings: Settings) -> list[InstanceConfig]:
    if args.all and args.names:
        raise InputError("shutdown: give instance names or --all, not both")
    if args.all:
        if not settings.instances:
            raise InputError("shutdown --all: no instances configured")
        return list(settings.instances)
    if not args.names:
        raise InputError("shutdown: name the instances to shut down, or --all")
    return [settings.instance(n) for n in dict.fromkeys(args.names)]


def run_shutdown(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    targets = _targets(args, settings)
    names = ", ".join(i.name for i in targets)
    if not args.yes:
        if not sys.stdin.isatty():
            raise InputError(f"shutdown {names}: add --yes to do it without asking")
        if input(f"Shut down {names}? Running jobs stop with it. [y/N] ").strip().lower() not in ("y", "yes"):
            print("nothing shut down")
            return EXIT_OK
    secrets = SecretStore()

    def make_host(inst: InstanceConfig) -> Host:
        return build_ssh_host(inst, settings, paths, secrets, sighting=True)

    before = None
    pulled = [i.name for i in targets if i.sync.local is not None]
    if pulled and not args.no_sync:
        print(f"pulling the results of {', '.join(pulled)} first (sync pull; --no-sync skips it)")
        before = pull_before(make_host, str(paths.config_file.resolve()), secrets.remembered)
    results = asyncio.run(shutdown_many(targets, make_host, before=before))
    with Ledger(paths.ledger_file) as ledger:
        for r in results:
            if r.stopped:
                ledger.close(r.name, time.time(), "shutdown")
    failed = [r for r in results if not r.stopped]
    width = max(len(r.name) for r in results)
    for r in results:
        (sys.stderr if not r.stopped else sys.stdout).write(f"{r.name:<{width}}  {r.detail}\n")
    if failed:
        sys.stderr.write(f"gpu-tui: NOT shut down: {', '.join(r.name for r in failed)}; they may still be billing\n")
        return EXIT_PARTIAL
    return EXIT_OK
