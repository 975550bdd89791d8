"""`gpu-tui start NAME... [--no-wait] [--timeout S]`: power instances on through their provider's
API, wait (with progress lines) until SSH answers, refresh host, port and price in the config
from the API (a start can move an instance), and record the billing start in the cost ledger."""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from collections.abc import Callable

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL
from gpu_tui.commands.provider_cmd import require_token
from gpu_tui.commands.support.cells import cell_len, pad
from gpu_tui.config.edit import upsert_instance
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.providers import API_PROVIDERS
from gpu_tui.core.text import printable
from gpu_tui.services.billing import Billing
from gpu_tui.services.providers import ProviderClient, client_for
from gpu_tui.services.providers.ops import StartResult, refreshed_fields, start_instance

__all__ = ["run_start"]


def _check(inst: InstanceConfig) -> InstanceConfig:
    if inst.provider not in API_PROVIDERS or not inst.provider_id:
        raise InputError(
            _(
                "start {name}: gpu-tui can power on only instances imported from a provider account "
                "(provider runpod, vast or autodl with a provider_id); `gpu-tui import PROVIDER` "
                "adds them"
            ).format(name=inst.name)
        )
    return inst


def run_start(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise InputError(
            _("--timeout {value}: give the seconds to wait for SSH, more than 0").format(value=args.timeout)
        )
    targets = [_check(settings.instance(n)) for n in dict.fromkeys(args.names)]
    secrets = SecretStore()
    clients: dict[str, ProviderClient] = {
        p: client_for(p, require_token(p, secrets)) for p in dict.fromkeys(t.provider for t in targets)
    }

    def progress(name: str) -> Callable[[str], None]:
        return lambda line: print(f"{name}: {printable(line)}", flush=True)

    async def all_of() -> list[StartResult]:
        return list(
            await asyncio.gather(
                *(
                    start_instance(
                        t,
                        clients[t.provider],
                        wait=not args.no_wait,
                        progress=progress(t.name),
                        wait_seconds=args.timeout,
                    )
                    for t in targets
                )
            )
        )

    results = asyncio.run(all_of())
    rates = {}
    for inst, r in zip(targets, results, strict=True):
        fields = refreshed_fields(inst, r) if r.ok else {}
        if fields:
            upsert_instance(paths.config_file, {"name": inst.name, **fields}, match_host_user=False)
            print(
                _("{name}: the config now says {fields}").format(
                    name=inst.name, fields=", ".join(f"{k} = {v}" for k, v in fields.items())
                )
            )
        rate = fields.get("hourly_rate", inst.hourly_rate)
        rates[inst.name] = float(rate) if isinstance(rate, int | float) else inst.hourly_rate
    with Billing(paths.ledger_file) as billing:
        for inst, r in zip(targets, results, strict=True):
            if r.ok:
                billing.powered_on(inst, time.time(), rate=rates[inst.name])
    width = max(cell_len(r.name) for r in results)
    for r in results:
        (sys.stdout if r.ok else sys.stderr).write(f"{pad(r.name, width)}  {printable(r.detail)}\n")
    failed = [r.name for r in results if not r.ok]
    if failed:
        sys.stderr.write("gpu-tui: " + _("not started: {names}").format(names=", ".join(failed)) + "\n")
        return EXIT_PARTIAL
    return EXIT_OK
