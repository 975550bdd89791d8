"""`gpu-tui status [--json] [NAME...]`: print one sample of every instance."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Iterable, Mapping

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE
from gpu_tui.commands.support.cells import format_rows
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.metrics.xid import xid_text
from gpu_tui.core.money.cost import currency_of
from gpu_tui.core.power import release_at, release_line, rule_for
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_duration_s, format_mib_as_gib, format_money, format_percent, format_rate_per_hour
from gpu_tui.services.billing import Billing
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.monitor.prometheus import lab_source
from gpu_tui.services.statedir import shell_state_dir
from gpu_tui.services.status import (
    InstanceStatus,
    collect_status,
    one_row_per_node,
    prometheus_status,
    status_json,
)

__all__ = ["run_status", "format_table", "record_uptimes"]


HEADER = (N_("NAME"), N_("STATE"), N_("GPUS"), N_("UTIL"), N_("VRAM GiB"), N_("UP"), N_("RATE"), N_("COST"))
ONLINE, OFFLINE, GPU_ERROR = N_("online"), N_("offline"), N_("gpu error")
"""The state words the table shows (translated there; `--json` has none of them)."""


def _num(v: object, suffix: str = "") -> str:
    return "-" if v is None else f"{v}{suffix}"


def format_table(
    statuses: list[InstanceStatus], currency: str, currencies: Mapping[str, str | None] | None = None
) -> str:
    """The status table, its columns aligned in terminal cells, each row followed by its GPUs;
    money in each instance's own currency (`currencies`: name -> its config's `currency`)."""
    rows = [tuple(_(h) for h in HEADER)]
    details: dict[int, list[str]] = {}
    for i, s in enumerate(statuses, start=1):
        if not s.online:
            state = _(s.error_title or OFFLINE)
        elif s.gpu_error:
            state = _(GPU_ERROR)
        else:
            state = _(ONLINE)
        utils = [g.utilization_gpu for g in s.gpus if g.utilization_gpu is not None]
        used = [g.memory_used_mib for g in s.gpus if g.memory_used_mib is not None]
        total = [g.memory_total_mib for g in s.gpus if g.memory_total_mib is not None]
        own = currency_of((currencies or {}).get(s.name), currency)
        rows.append(
            (
                s.name,
                state,
                str(len(s.gpus)) if s.online else "-",
                format_percent(sum(utils) / len(utils)) if utils else "-",
                f"{format_mib_as_gib(sum(used))}/{format_mib_as_gib(sum(total))}" if total else "-",
                format_duration_s(s.uptime_seconds),
                format_rate_per_hour(s.hourly_rate, own),
                format_money(s.cost_so_far, own),
            )
        )
        lines = []
        if s.error:
            lines.append(f"  {printable(s.error)}")
        if s.gpu_error:
            lines.append("  " + _("gpu error: {reason}").format(reason=printable(s.gpu_error.reason)))
        for g in s.gpus:
            lines.append(
                "  "
                + _("[{index}] {name}: {util} util, {used}/{total} MiB, {temp}, {power}/{limit}").format(
                    index=g.index,
                    name=printable(g.name or "?"),
                    util=_num(g.utilization_gpu, "%"),
                    used=_num(g.memory_used_mib),
                    total=_num(g.memory_total_mib),
                    temp=_num(g.temperature_c, "C"),
                    power=_num(g.power_draw_w, "W"),
                    limit=_num(g.power_limit_w, "W"),
                )
            )
        for gpu, xid in sorted(s.xids.items()):
            lines.append("  " + _("[{index}] {xid}").format(index=gpu, xid=xid_text(xid)))
        details[i] = lines
    out = []
    for i, line in enumerate(format_rows(rows)):
        out.append(line)
        out.extend(details.get(i, []))
    return "\n".join(out)


def record_uptimes(statuses: list[InstanceStatus], paths: Paths, instances: Iterable[InstanceConfig]) -> None:
    """Every instance whose uptime was read (GPUs readable or not: it bills) into the cost ledger,
    at its config's rate in its own currency."""
    by_name = {i.name: i for i in instances}
    seen = [
        (by_name[s.name], s.uptime_seconds, s.stats.taken_at)
        for s in statuses
        if s.stats and s.uptime_seconds is not None and s.name in by_name
    ]
    if seen:
        with Billing(paths.ledger_file) as billing:
            if not billing.seen_many(seen):
                sys.stderr.write(
                    "gpu-tui: "
                    + _("ledger: could not record uptimes in {path} (see the log)").format(path=paths.ledger_file)
                    + "\n"
                )


def set_release_times(statuses: list[InstanceStatus], paths: Paths, instances: Iterable[InstanceConfig]) -> list[str]:
    """Each unreachable instance's `release_at` (its provider's rule from the last time the ledger
    saw it up); returns a line for each, saying when and what keeps it."""
    by_name = {i.name: i for i in instances}
    down = [s for s in statuses if s.source == "ssh" and not s.online and s.name in by_name]
    if not down or not paths.ledger_file.exists():
        return []
    try:
        with Billing(paths.ledger_file) as billing:
            seen = billing.last_seen_up()
    except GpuTuiError as exc:  # the ledger cannot tell: no dates, said once
        sys.stderr.write(f"gpu-tui: {exc.message}\n")
        return []
    lines, now = [], time.time()
    for st in down:
        inst = by_name[st.name]
        rule = rule_for(inst.provider, inst.release_days)
        st.release_at = release_at(rule, seen.get(st.name), up=False)
        if rule is not None and st.release_at is not None:
            lines.append(release_line(st.name, st.release_at, now, rule))
    return lines


def run_status(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    instances = [settings.instance(n) for n in args.names] if args.names else list(settings.instances)
    labs = {} if args.names else settings.prometheus  # a lab's nodes: every one, as the dashboard will
    if not instances and not labs:
        sys.stderr.write(
            "gpu-tui: "
            + _("no instances configured in {path}; add one (see config.example.toml) or try `gpu-tui demo`").format(
                path=paths.config_file
            )
            + "\n"
        )
        return EXIT_USAGE
    secrets = SecretStore()
    hosts = [(build_ssh_host(i, settings, paths, secrets), i.hourly_rate) for i in instances]
    timeout = settings.settings.connect_timeout_seconds

    sources = {name: lab_source(name, lab, secrets, timeout=timeout) for name, lab in labs.items()}

    async def everything() -> list[InstanceStatus]:
        states = {i.name: shell_state_dir(i) for i in instances}
        ssh = collect_status(hosts, overall_timeout=timeout + 20, states=states)
        prom = [prometheus_status(name, sources[name], lab.hourly_rate, lab.rate_per) for name, lab in labs.items()]
        found = await asyncio.gather(ssh, *prom)
        return [st for part in found for st in part]

    statuses = one_row_per_node(asyncio.run(everything()), {i.name: i.host for i in instances})
    record_uptimes([st for st in statuses if st.source == "ssh"], paths, instances)
    releases = set_release_times(statuses, paths, instances)
    currencies = {i.name: settings.currency_of(i) for i in instances}
    for name, lab in labs.items():
        for st in statuses:
            if st.source == f"prometheus:{name}":
                currencies[st.name] = lab.currency or settings.settings.currency
    if args.json:
        print(json.dumps(status_json(statuses, currencies), ensure_ascii=False))
    else:
        print(format_table(statuses, settings.settings.currency, currencies))
        for line in releases:
            print(line)
    failed = [s for s in statuses if not s.online or s.gpu_error or s.xids]
    for s in failed:
        if s.online and s.gpu_error is not None:
            why = _("gpu error: {reason}").format(reason=s.gpu_error.reason)
        elif s.online:  # a GPU's last Xid: a fault someone has to look at
            why = "; ".join(
                _("GPU {index}: {xid}").format(index=gpu, xid=xid_text(xid)) for gpu, xid in sorted(s.xids.items())
            )
        else:
            why = s.error or _("failed")
        sys.stderr.write(f"gpu-tui: {s.name}: {printable(why)}\n")
    return EXIT_PARTIAL if failed else EXIT_OK
