"""Every subcommand that reaches an instance records it in the cost ledger: an instance seen up
is billing, whatever the command was for (`run`, `logs`, `conda`, `ssh`...). This reads the
uptime; services/billing.py decides what is written."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.metrics.hoststats import parse_probe
from gpu_tui.remote.host import Host
from gpu_tui.services.billing import Billing
from gpu_tui.services.monitor import probes

__all__ = ["record_sighting"]

log = logging.getLogger(__name__)


async def record_sighting(host: Host, inst: InstanceConfig, ledger_file: Path) -> bool:
    """Read the instance's uptime (one short exec) and record it; False when either failed.
    Never raises: the command the user asked for matters more than the ledger."""
    try:
        res = await host.run(probes.stats_once_command(with_apps=False), timeout=10)
    except RemoteError as exc:
        log.info("%s: no uptime for the ledger: %s", inst.name, exc.english)
        return False
    stats, _ = parse_probe(res.stdout.splitlines(), time.time())
    if stats.uptime_seconds is None:
        return False
    with Billing(ledger_file) as billing:
        return billing.seen_up(inst, stats.uptime_seconds, stats.taken_at)
