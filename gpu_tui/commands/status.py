"""`gpu-tui status [--json] [NAME...]`: print one sample of every instance."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import Settings
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_duration_s, format_mib_as_gib, format_money, format_percent, format_rate_per_hour
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.ledger import Ledger
from gpu_tui.services.status import InstanceStatus, collect_status, status_json

__all__ = ["run_status", "format_table", "record_uptimes"]


def _num(v: object, suffix: str = "") -> str:
    return "-" if v is None else f"{v}{suffix}"


def format_table(statuses: list[InstanceStatus], currency: str) -> str:
    rows = [("NAME", "STATE", "GPUS", "UTIL", "VRAM GiB", "UP", "RATE", "COST")]
    details: dict[int, list[str]] = {}
    for i, s in enumerate(statuses, start=1):
        if not s.online:
            state = s.error_title or "offline"
        elif s.gpu_error:
            state = "gpu error"
        else:
            state = "online"
        utils = [g.utilization_gpu for g in s.gpus if g.utilization_gpu is not None]
        used = [g.memory_used_mib for g in s.gpus if g.memory_used_mib is not None]
        total = [g.memory_total_mib for g in s.gpus if g.memory_total_mib is not None]
        rows.append((
            s.name,
            state,
            str(len(s.gpus)) if s.online else "-",
            format_percent(sum(utils) / len(utils)) if utils else "-",
            f"{format_mib_as_gib(sum(used))}/{format_mib_as_gib(sum(total))}" if total else "-",
            format_duration_s(s.uptime_seconds),
            format_rate_per_hour(s.hourly_rate, currency),
            format_money(s.cost_so_far, currency),
        ))
        lines = []
        if s.error:
            lines.append(f"  {printable(s.error)}")
        if s.gpu_error:
            lines.append(f"  gpu error: {printable(s.gpu_error.reason)}")
        for g in s.gpus:
            lines.append(
                f"  [{g.index}] {printable(g.name or '?')}: {_num(g.utilization_gpu, '%')} util, "
                f"{_num(g.memory_used_mib)}/{_num(g.memory_total_mib)} MiB, {_num(g.temperature_c, 'C')}, "
                f"{_num(g.power_draw_w, 'W')}/{_num(g.power_limit_w, 'W')}"
            )
        details[i] = lines
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    out = []
    for i, r in enumerate(rows):
        out.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
        out.extend(details.get(i, []))
    return "\n".join(out)


def record_uptimes(statuses: list[InstanceStatus], paths: Paths) -> None:
    """Every instance whose uptime was read (GPUs readable or not: it bills) into the cost ledger."""
    seen = [
        (s.name, s.uptime_seconds, s.hourly_rate, s.stats.taken_at)
        for s in statuses
        if s.stats and s.uptime_seconds is not None
    ]
    if seen:
        with Ledger(paths.ledger_file) as ledger:
            if not ledger.observe_many(seen):
                sys.stderr.write(f"gpu-tui: ledger: could not record uptimes in {paths.ledger_file} (see the log)\n")


def run_status(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    instances = [settings.instance(n) for n in args.names] if args.names else list(settings.instances)
    if not instances:
        sys.stderr.write(
            f"gpu-tui: no instances configured in {paths.config_file}; add one (see config.example.toml) "
            "or try `gpu-tui demo`\n"
        )
        return EXIT_USAGE
    secrets = SecretStore()
    hosts = [(build_ssh_host(i, settings, paths, secrets), i.hourly_rate) for i in instances]
    statuses = asyncio.run(collect_status(hosts, overall_timeout=settings.settings.connect_timeout_seconds + 20))
    record_uptimes(statuses, paths)
    if args.json:
        print(json.dumps(status_json(statuses), ensure_ascii=False))
    else:
        print(format_table(statuses, settings.settings.currency))
    failed = [s for s in statuses if not s.online or s.gpu_error]
    for s in failed:
        why = s.error if not s.online or s.gpu_error is None else f"gpu error: {s.gpu_error.reason}"
        sys.stderr.write(f"gpu-tui: {s.name}: {printable(why or 'failed')}\n")
    return EXIT_PARTIAL if failed else EXIT_OK
