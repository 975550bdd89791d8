"""`gpu-tui shutdown NAME...|--all [--yes] [--no-sync]`: verified shutdown from a shell, in
parallel; an instance with sync configured has its results pulled first."""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import time

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL
from gpu_tui.commands.support.cells import cell_len, pad
from gpu_tui.commands.support.output import confirm
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.remote.host import Host
from gpu_tui.services.billing import Billing
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.power import ShutdownResult, pull_before
from gpu_tui.services.providers.ops import api_clients, shutdown_fleet

__all__ = ["run_shutdown", "report_detail"]

_VERIFIED = re.compile(r"stopped \(verified in ([0-9.]+) s\)")


def report_detail(r: ShutdownResult) -> str:
    """The service's `stopped (verified in 1.2 s)` / `NOT shut down: why` in the language in
    force; the reason after the colon is the service's own words."""
    verified = _VERIFIED.fullmatch(r.detail)
    if r.stopped and verified:
        return _("stopped (verified in {seconds} s)").format(seconds=verified[1])
    for head, words in (("NOT shut down: ", _("NOT shut down: {why}")), ("not shut down: ", _("not shut down: {why}"))):
        if not r.stopped and r.detail.startswith(head):
            return words.format(why=r.detail.removeprefix(head))
    return r.detail


def _targets(args: argparse.Namespace, settings: Settings) -> list[InstanceConfig]:
    if args.all and args.names:
        raise InputError(_("shutdown: give instance names or --all, not both"))
    if args.all:
        if not settings.instances:
            raise InputError(_("shutdown --all: no instances configured"))
        return list(settings.instances)
    if not args.names:
        raise InputError(_("shutdown: name the instances to shut down, or --all"))
    return [settings.instance(n) for n in dict.fromkeys(args.names)]


def run_shutdown(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    targets = _targets(args, settings)
    names = ", ".join(i.name for i in targets)
    if not args.yes:
        if not sys.stdin.isatty():
            raise InputError(_("shutdown {names}: add --yes to do it without asking").format(names=names))
        if not confirm(_("Shut down {names}? Running jobs stop with it.").format(names=names)):
            print(_("nothing shut down"))
            return EXIT_OK
    secrets = SecretStore()

    def make_host(inst: InstanceConfig) -> Host:
        return build_ssh_host(inst, settings, paths, secrets, sighting=True)

    before = None
    pulled = [i.name for i in targets if i.sync.local is not None]
    if pulled and not args.no_sync:
        print(_("pulling the results of {names} first (sync pull; --no-sync skips it)").format(names=", ".join(pulled)))
        before = pull_before(make_host, str(paths.config_file.resolve()), secrets.remembered)
    results = asyncio.run(
        shutdown_fleet(
            targets, make_host, api_clients(targets, secrets, args.via_api), via_api=args.via_api, before=before
        )
    )
    with Billing(paths.ledger_file) as billing:
        for r in results:
            if r.stopped:
                billing.shut_down(r.name, time.time())
    failed = [r for r in results if not r.stopped]
    width = max(cell_len(r.name) for r in results)
    for r in results:
        (sys.stderr if not r.stopped else sys.stdout).write(f"{pad(r.name, width)}  {report_detail(r)}\n")
    if failed:
        line = _("NOT shut down: {names}; they may still be billing").format(names=", ".join(r.name for r in failed))
        sys.stderr.write(f"gpu-tui: {line}\n")
        return EXIT_PARTIAL
    return EXIT_OK
