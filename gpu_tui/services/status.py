"""`gpu-tui status`: connect to every instance in parallel, take one sample each, report.

One slow or dead instance costs at most its own connect timeout and never delays the others.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from gpu_tui.core.bilingual import say
from gpu_tui.core.errors import GpuTuiError, RemoteError
from gpu_tui.core.i18n import N_
from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.metrics.holders import Attribution, HolderScan, attribute
from gpu_tui.core.metrics.hoststats import parse_probe
from gpu_tui.core.metrics.xid import XID_WORDS
from gpu_tui.core.models import GpuError, GpuErrorKind, GpuFrame, GpuProcess, GpuSample, HostStats
from gpu_tui.core.money.cost import cost_so_far
from gpu_tui.remote.host import Host
from gpu_tui.services.monitor import probes
from gpu_tui.services.monitor.amdwatch import read_amd_once
from gpu_tui.services.monitor.prometheus import PromSource, read_fleet
from gpu_tui.services.monitor.promwatch import node_name

log = logging.getLogger(__name__)

__all__ = [
    "InstanceStatus",
    "sample_host",
    "collect_status",
    "one_row_per_node",
    "prometheus_status",
    "status_json",
]


@dataclass(slots=True)
class InstanceStatus:
    """One instance's answer to `status`; `as_json` is the CONTRACTS.md shape."""

    name: str
    hourly_rate: float
    online: bool = False
    error: str | None = None
    """Why it is not (fully) read, in the language in force."""
    error_en: str | None = None
    """`error` in English, for JSON (None: `error` is English already)."""
    error_title: str | None = None
    """The error's English title (`unreachable`, `auth failed`...): translate it where it is shown."""
    gpu_error: GpuError | None = None
    gpus: list[GpuSample] = field(default_factory=list)
    processes: list[GpuProcess] = field(default_factory=list)
    """The driver's compute apps (host pids in a container)."""
    holders: HolderScan | None = None
    """Who holds each GPU's device file, seen from inside (None: not scanned)."""
    release_at: float | None = None
    """The earliest time its provider may release it and its data (core/power.py): set only
    while it cannot be reached."""
    stats: HostStats | None = None
    source: str = "ssh"
    """Where its numbers come from: `ssh` (an instance gpu-tui logs in to) or `prometheus:NAME`."""
    xids: dict[int, int] = field(default_factory=dict)
    """{GPU index: its last Xid} where that is not 0 (dcgm-exporter's, through Prometheus)."""
    gpus_from: str | None = None
    """Where `gpus` come from when not `source`: an SSH entry that is a lab's node (`prometheus:NAME`)."""

    @property
    def uptime_seconds(self) -> int | None:
        return self.stats.uptime_seconds if self.stats else None

    @property
    def cost_so_far(self) -> float | None:
        return cost_so_far(self.hourly_rate, self.uptime_seconds)

    def as_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "online": self.online,
            # English whatever the language: JSON values are not translated
            "error": self.error if self.error_en is None else self.error_en,
            "gpu_error": self.gpu_error.reason_en if self.gpu_error else None,
            "hourly_rate": self.hourly_rate,
            "uptime_seconds": self.uptime_seconds,
            "cost_so_far": self.cost_so_far,
            "gpus": [g.as_json() for g in self.gpus],
            "source": self.source,
            "gpus_from": self.gpus_from or self.source,
            "xids": [{"gpu": gpu, "xid": xid, "meaning": XID_WORDS.get(xid)} for gpu, xid in sorted(self.xids.items())],
            "processes": [r.as_json() for r in self.attribution().rows],
            "release_at": None if self.release_at is None else int(self.release_at),
        }

    def attribution(self) -> Attribution:
        return attribute(self.processes, self.holders, self.gpus)


def status_json(statuses: Sequence[InstanceStatus], currencies: Mapping[str, str] | None = None) -> dict[str, object]:
    """The CONTRACTS.md shape; with `currencies` (name -> the currency its rate is in) each
    instance also says its `currency`."""
    out = []
    for s in statuses:
        entry = s.as_json()
        if currencies is not None and s.name in currencies:
            entry["currency"] = currencies[s.name]
        out.append(entry)
    return {"instances": out}


async def sample_host(
    host: Host, hourly_rate: float, *, command_timeout: float = 20.0, state: str | None = None
) -> InstanceStatus:
    """Connect, read GPUs, host stats and who holds the GPUs once (three channels at once), close.
    `state`: the instance's state dir as a shell word (for the jobs that hold GPUs)."""
    st = InstanceStatus(name=host.name, hourly_rate=hourly_rate)
    try:
        await host.connect()
    except RemoteError as exc:
        st.error, st.error_en, st.error_title = exc.message, exc.english, exc.title
        return st
    st.online = True
    try:
        gpu_res, stats_res, holders_res = await asyncio.gather(
            host.run(probes.gpu_once_command(), timeout=command_timeout),
            host.run(probes.stats_once_command(), timeout=command_timeout),
            host.run(probes.holders_command(state), timeout=command_timeout),
        )
    except RemoteError as exc:
        st.error, st.error_en, st.error_title = exc.message, exc.english, exc.title
        st.online = host.connected
        await host.close()
        return st
    text = gpu_res.stdout + gpu_res.stderr
    if nvsmi.unsupported_field(text) == "mig.mode.current":
        try:
            gpu_res = await host.run(probes.gpu_once_command(legacy=True), timeout=command_timeout)
            text = gpu_res.stdout + gpu_res.stderr
        except RemoteError as exc:
            st.error, st.error_en, st.error_title = exc.message, exc.english, exc.title
    missing = nvsmi.detect_error(text, gpu_res.exit_status)
    amd: GpuFrame | GpuError | None = None
    if missing is not None and missing.kind is GpuErrorKind.NOT_FOUND:  # an AMD instance?
        try:
            amd = await read_amd_once(host, timeout=command_timeout)
        except RemoteError as exc:
            log.info("%s: AMD GPUs: %s", host.name, exc)
    await host.close()
    st.gpus = nvsmi.parse_rows(text)
    st.gpu_error = nvsmi.detect_error(text, gpu_res.exit_status)
    if isinstance(amd, GpuFrame):
        st.gpus, st.gpu_error = list(amd.gpus), None
    elif amd is not None:
        st.gpu_error = amd
    if st.gpu_error is None and not st.gpus and gpu_res.exit_status != 0:
        exited = say(N_("nvidia-smi exited ({status})"), status=gpu_res.exit_status)
        st.gpu_error = nvsmi.gpu_error(GpuErrorKind.UNKNOWN, exited)
    lines = stats_res.stdout.splitlines()
    if probes.APPS_MARK in lines:
        cut = lines.index(probes.APPS_MARK)
        st.processes = nvsmi.parse_compute_apps("\n".join(lines[cut + 1 :]))
        lines = lines[:cut]
    st.stats, _ = parse_probe(lines, time.time())
    st.holders = probes.holders_answer(holders_res.stdout)
    return st


async def collect_status(
    hosts: Sequence[tuple[Host, float]], *, overall_timeout: float = 60.0, states: Mapping[str, str] | None = None
) -> list[InstanceStatus]:
    """All instances at once, results in the given order (`states`: name -> state dir shell word)."""

    async def one(host: Host, rate: float) -> InstanceStatus:
        try:
            state = (states or {}).get(host.name)
            return await asyncio.wait_for(sample_host(host, rate, state=state), overall_timeout)
        except TimeoutError:
            await host.close()
            late = say(N_("no answer within {seconds:g} s"), seconds=overall_timeout)
            return InstanceStatus(
                name=host.name, hourly_rate=rate, error=late.text, error_en=late.english, error_title="unreachable"
            )

    return list(await asyncio.gather(*(one(h, r) for h, r in hosts)))


async def prometheus_status(name: str, source: PromSource, rate: float, per: str) -> list[InstanceStatus]:
    """Every node of a lab's Prometheus as `status` lists an instance (issue 26): one refresh;
    a node whose exporter is down is offline under its name; a Prometheus that cannot be read is
    one row named `prometheus:NAME` with the reason."""
    where = f"prometheus:{name}"
    try:
        got = await read_fleet(source)
    except GpuTuiError as exc:
        return [InstanceStatus(name=where, hourly_rate=0.0, error=exc.line(), error_title=exc.title, source=where)]
    out = []
    for node, reading in got.nodes.items():
        gpus = list(reading.gpus)
        st = InstanceStatus(name=node, hourly_rate=rate * len(gpus) if per == "gpu" else rate, gpus=gpus, source=where)
        st.online = reading.up is not False and bool(gpus)
        st.xids = dict(reading.xids)
        if not st.online:
            down = say(N_("its exporter is down (Prometheus up == 0)")) if reading.up is False else None
            down = down or say(N_("no GPU series in Prometheus"))
            st.error, st.error_en, st.error_title = down.text, down.english, "unreachable"
        out.append(st)
    return out


def one_row_per_node(statuses: Sequence[InstanceStatus], ssh_hosts: Mapping[str, str]) -> list[InstanceStatus]:
    """A lab's node that is also an SSH entry (by the entry's name, or its `host`; `ssh_hosts`:
    name -> host) is one row, the entry's, as in the dashboard: its GPUs Prometheus's where
    Prometheus reads them (`gpus_from`), its Xids added; login, uptime and cost over SSH."""
    entries = {s.name: s for s in statuses if s.source == "ssh"}
    by_host = {host: entries[name] for name, host in ssh_hosts.items() if name in entries}
    out = []
    for st in statuses:
        entry = None if st.source == "ssh" else entries.get(node_name(st.name)) or by_host.get(st.name)
        if entry is None:
            out.append(st)
            continue
        entry.xids = dict(st.xids)
        if st.online and st.gpus:
            entry.gpus, entry.gpu_error, entry.gpus_from = st.gpus, None, st.source
    return out
