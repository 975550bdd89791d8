"""Host CPU / RAM / disk and the GPU processes of the selected instance."""

from __future__ import annotations

import time

from rich.text import Text

from gpu_tui.core.i18n import _, ngettext
from gpu_tui.core.metrics.lowutil import assess
from gpu_tui.core.metrics.xid import xid_text
from gpu_tui.core.power import DAY, release_line, rule_for
from gpu_tui.core.slurm import SlurmNode
from gpu_tui.core.text import printable
from gpu_tui.core.units import (
    format_duration_s,
    format_mib,
    format_mib_as_gib,
    format_money,
    format_percent,
    format_rate_per_hour,
)
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.format import job_line, process_line
from gpu_tui.ui.widgets.text_panel import TextPanel

__all__ = ["HostPanel"]

PROCESSES_SHOWN = 6
"""The panel's GPU process lines; the processes screen lists every one."""


def partitions_text(nodes: tuple[SlurmNode, ...], most: int = 3) -> Text:
    """A login node's partitions, one line each: `gpu  2 nodes  GPUs 3/8 in use  mixed, idle`."""
    parts: dict[str, list[SlurmNode]] = {}
    for node in nodes:
        parts.setdefault(node.partition, []).append(node)
    t = Text("\n" + _("partitions"), style="bold")
    if len(parts) > most:
        t.append("  " + _("({n} in all)").format(n=len(parts)), style="dim")
    for name, members in list(parts.items())[:most]:
        used, total = sum(n.gpus_used for n in members), sum(n.gpus_total for n in members)
        states = ", ".join(sorted({n.state for n in members}))
        count = ngettext("{n} node", "{n} nodes", len(members)).format(n=len(members))
        t.append(f"\n  {printable(name)}  {count}  ")
        t.append(
            _("GPUs {used}/{total} in use").format(used=used, total=total),
            style="yellow" if total and used >= total else "",
        )
        t.append(f"  {printable(states)}", style="dim")
    return t


class HostPanel(TextPanel):
    DEFAULT_CSS = """
    HostPanel { height: 1fr; padding: 0 1; border-top: solid $primary-darken-2; }
    """

    idle_after: float | None = None
    """Seconds of billing idle after which the panel warns (settings.idle_minutes)."""
    idle_util: float = 5.0
    """settings.idle_util_percent: a GPU under it is idle, not under-used."""
    currency: str = "¥"
    shutdown_key = "S"
    logs_key = "l"
    processes_key = "P"
    """The keys the panel names; the dashboard passes the user's remaps."""

    def render_view(self, v: InstanceView | None, now: float | None = None) -> Text:
        t = Text()
        if v is not None and v.xids:  # a GPU's last Xid, from the lab's dcgm-exporter: shown in any state
            for index, xid in sorted(v.xids.items()):
                t.append(_("GPU {index}: {xid}").format(index=index, xid=xid_text(xid)) + "\n", style="bold red")
        if v is not None and v.release_at is not None:  # a stopped box full of checkpoints (issue 28)
            rule = rule_for(v.config.provider, v.config.release_days)
            clock = time.time() if now is None else now
            if rule is not None:
                urgent = v.release_at - clock < DAY
                t.append(
                    release_line(v.name, v.release_at, clock, rule) + "\n", style="bold red" if urgent else "yellow"
                )
        if v is None or v.state != "online":
            return t
        if not v.ours:
            lab = v.source.removeprefix("prometheus:")
            t.append(
                _("from Prometheus {name}: its numbers only (no login, no jobs)").format(name=lab) + "\n", style="dim"
            )
        if v.watch_note:  # the watch loop could not run there: said, since polling costs the instance more
            t.append(printable(v.watch_note) + "\n", style="dim yellow")
        if v.autostop is not None and v.autostop.status.armed:
            # the watchdog decides every 15 s; count down from when its state was read
            words = v.autostop.status.summary(elapsed=time.monotonic() - v.autostop.fetched_at)
            failed = v.autostop.status.state == "failed" or v.autostop.status.failure
            t.append(words, style="bold red" if failed else "bold cyan")
            t.append("  " + _("(on the instance: it fires with the laptop closed)") + "\n", style="dim")
        idle = v.idle_seconds(now) if now is not None else None
        if idle is not None and self.idle_after is not None and idle >= self.idle_after:
            spent = v.config.hourly_rate * idle / 3600
            t.append(_("idle {duration}").format(duration=format_duration_s(idle)), style="bold yellow")
            own = v.config.bills_in(self.currency)
            rate, so_far = format_rate_per_hour(v.config.hourly_rate, own), format_money(spent, own)
            t.append(
                _(
                    ": every GPU under the idle threshold and no job running, still billing {rate} "
                    "({spent} so far idle). {key} shuts it down."
                ).format(rate=rate, spent=so_far, key=self.shutdown_key)
            )
            t.append("\n")
        low = assess(v.history, now, idle_below=self.idle_util) if now is not None and idle is None else None
        if low is not None:
            t.append(low.headline(), style="bold yellow")
            t.append("\n  " + low.advice() + "\n")
        s = v.stats
        if s is not None:
            cpu = format_percent(s.cpu_percent)
            t.append(_("host") + " ", style="bold")
            t.append(
                _("CPU {percent} of {count}  load {load}").format(
                    percent=cpu, count=s.cpu_count or "?", load=s.load1 if s.load1 is not None else "-"
                )
                + "  "
            )
            if s.mem_total_mib:
                t.append(
                    _("RAM {used}/{total}G").format(
                        used=format_mib_as_gib(s.mem_used_mib or 0), total=format_mib_as_gib(s.mem_total_mib)
                    )
                    + "  "
                )
            if s.disk_total_gib:
                t.append(
                    _("disk / {used}/{total}G").format(used=f"{s.disk_used_gib:.0f}", total=f"{s.disk_total_gib:.0f}")
                )
        if v.jobs:
            # running jobs first, then those waiting in a queue, then the most recent others;
            # at most three lines
            running = [j for j in v.jobs if j.state == "running"]
            pending = [j for j in v.jobs if j.state == "pending"]
            rest = [j for j in v.jobs if j.state not in ("running", "pending")]
            shown = (running[::-1] + pending + rest[::-1])[:3]
            t.append("\n" + _("jobs"), style="bold")
            if len(v.jobs) > len(shown):
                t.append("  " + _("({n} in all; {key}: logs)").format(n=len(v.jobs), key=self.logs_key), style="dim")
            for job in shown:
                t.append("\n  ")
                t.append_text(job_line(job, time.time() if now is None else now))
        if v.cluster:
            t.append_text(partitions_text(v.cluster))
        att = v.attribution()
        if att.rows or att.unnamed_mib:
            t.append("\n" + _("GPU processes"), style="bold")
            t.append("  " + _("({key}: list, end one)").format(key=self.processes_key), style="dim")
            room = max(20, (self.content_region.width or self.size.width or 80) - 2)
            names = {j.id: j.name for j in v.jobs if j.name}
            for row in att.rows[:PROCESSES_SHOWN]:
                line = process_line(row, names)
                line.truncate(room, overflow="ellipsis")  # one line each: a command line can be long
                t.append("\n  ")
                t.append_text(line)
            if len(att.rows) > PROCESSES_SHOWN:
                t.append("\n  " + _("{n} more").format(n=len(att.rows) - PROCESSES_SHOWN), style="dim")
            for gpu, mib in sorted(att.unnamed_mib.items()):
                held = _("gpu {gpu}: {memory} held by processes this instance cannot name (host pids)").format(
                    gpu=gpu, memory=format_mib(mib)
                )
                t.append("\n  " + held, style="yellow" if not any(r.gpu == gpu for r in att.rows) else "dim")
        elif v.frame is not None and not v.pods:
            t.append("\n" + _("no GPU processes"), style="dim")
        if v.pods:  # a Kubernetes node: which pod each GPU is allotted to (remote text: printable)
            t.append("\n" + _("pods"), style="bold")
            for gpu, pods in sorted(v.pods.items()):
                t.append(f"\n  gpu {gpu}  " + ", ".join(printable(p) for p in pods))
        return t

    def show(self, v: InstanceView | None, now: float | None = None) -> None:
        self.set_text(self.render_view(v, now))
