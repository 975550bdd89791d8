"""Rich `Text` for the dashboard's rows; remote strings enter only as plain text, never markup.

Numbers are spelled by core.units (the CLI prints the same); this module adds styles and layout."""

from __future__ import annotations

import string
from collections.abc import Mapping

from rich.text import Text

from gpu_tui.core.i18n import N_, _
from gpu_tui.core.jobs import JobInfo
from gpu_tui.core.metrics.holders import GpuHolderRow
from gpu_tui.core.metrics.spark import sparkline
from gpu_tui.core.models import GpuSample
from gpu_tui.core.text import printable
from gpu_tui.core.units import (
    format_duration_coarse_s,
    format_duration_s,
    format_eta_s,
    format_mib,
    format_mib_as_gib,
    format_percent,
)
from gpu_tui.services.fleet import InstanceView

__all__ = [
    "process_line",
    "STATE_STYLE",
    "STATE_WORDS",
    "JOB_WORDS",
    "in_context",
    "state_word",
    "job_word",
    "state_text",
    "text_parts",
    "gpu_row",
    "gpu_tail",
    "spark_width",
    "short_gpu_name",
    "job_line",
    "job_mark",
]

JOB_MARKS = {
    "pending": ("○", "yellow"),
    "running": ("▶", "green"),
    "succeeded": ("✓", "green"),
    "failed": ("✗", "bold red"),
    "stopped": ("■", "yellow"),
}

STATE_STYLE = {
    "online": "green",
    "connecting": "yellow",
    "offline": "red",
    "auth failed": "bold red",
    "host key changed": "bold red",
    "unknown host key": "bold yellow",
    "gpu error": "bold magenta",
    "stopped": "dim",
}


STATE_WORDS = {
    "online": N_("online"),
    "connecting": N_("connecting"),
    "offline": N_("offline"),
    "auth failed": N_("auth failed"),
    "host key changed": N_("host key changed"),
    "unknown host key": N_("unknown host key"),
    "gpu error": N_("gpu error"),
    "stopped": N_("instance|stopped"),  # shut down (已关机), not a job's `stopped` (已停止)
}
"""An instance's state word as shown; the English words stay what code compares and JSON holds."""

JOB_WORDS = {
    "pending": N_("pending"),
    "running": N_("running"),
    "succeeded": N_("succeeded"),
    "failed": N_("failed"),
    "stopped": N_("stopped"),
}


def in_context(marked: str) -> str:
    """`_` for a word English uses in two senses, marked `context|word`: its translation, or
    the word after the `|` where there is none (English)."""
    text = _(marked)
    return text.rpartition("|")[2] if text == marked else text


def state_word(state: str) -> str:
    """An instance's state (an English state word) in the language in force."""
    marked = STATE_WORDS.get(state)
    return state if marked is None else in_context(marked)


def job_word(state: str) -> str:
    """A job's state (`running`, `succeeded`, `failed`, `stopped`) in the language in force."""
    marked = JOB_WORDS.get(state)
    return state if marked is None else _(marked)


Part = str | tuple[str, str]


def text_parts(template: str, **values: Part) -> list[Part]:
    """A translated `template`'s pieces for `Text.assemble`, each `{field}` by its value, a
    `(text, style)` value keeping its style: the translation may put the fields in any order
    and the bold name stays bold. Values enter as plain text, never markup."""
    parts: list[Part] = []
    for literal, field, _spec, _conversion in string.Formatter().parse(template):
        if literal:
            parts.append(literal)
        if field is not None:
            parts.append(values[field])
    return parts


RELEASE_WARN_SECONDS = 3 * 86400
"""Within this of its provider's release date, an unreachable row says the time left instead of
its retry countdown (issue 28): what is about to be lost matters more than the next try."""


def state_text(view: InstanceView, now: float) -> Text:
    word = view.shown_state
    if view.release_at is not None and view.release_at - now < RELEASE_WARN_SECONDS and word != "online":
        left = format_duration_coarse_s(view.release_at - now)  # the state column is narrow
        return Text(_("{state} ⌛{left}").format(state=state_word(word), left=left), style="bold red")
    if word == "offline" and view.retry_at is not None:
        label = _("offline {countdown}").format(countdown=format_duration_s(view.retry_at - now))
    else:
        label = state_word(word)
    return Text(label, style=STATE_STYLE.get(word, ""))


def short_gpu_name(name: str | None) -> str:
    if not name:
        return "?"
    n = printable(name)
    for prefix in ("NVIDIA ", "GeForce ", "Tesla "):
        n = n.removeprefix(prefix)
    return n


def _pct(v: int | None) -> str:
    return f"{format_percent(v, missing='n/a'):>5}"


HEAD_COLUMNS = 18  # "idx name " before the first sparkline
PCT_COLUMNS = 6  # " 87% " between the sparklines


def gpu_tail(g: GpuSample) -> str:
    """VRAM, temperature and power: ` 20.0/24.0G  66°C  281/450W` (its width varies with the card)."""
    draw = "-" if g.power_draw_w is None else f"{g.power_draw_w:.0f}"
    limit = "-" if g.power_limit_w is None else f"{g.power_limit_w:.0f}"
    temp = "-" if g.temperature_c is None else g.temperature_c
    used, total = format_mib_as_gib(g.memory_used_mib), format_mib_as_gib(g.memory_total_mib)
    return f" {used:>5}/{total}G {temp:>3}°C {draw:>4}/{limit}W"


def spark_width(gpus: tuple[GpuSample, ...] | list[GpuSample], width: int) -> tuple[int, int]:
    """(sparkline width, tail width) so that every GPU row of a frame fits `width` and aligns."""
    tail_w = max((len(gpu_tail(g)) for g in gpus), default=0)
    return max(4, (width - HEAD_COLUMNS - PCT_COLUMNS - tail_w) // 2), tail_w


def gpu_row(
    g: GpuSample, util_hist: list[int | None], mem_hist: list[int | None], spark_w: int, tail_w: int = 0
) -> Text:
    """`0 RTX 4090  ▂▅▇█ 87%  ▃▄▅▅ 20.0/24.0G  66°C 281/450W` with fixed-scale histories."""
    t = Text()
    t.append(f"{g.index:>2} ", style="bold")
    t.append(f"{short_gpu_name(g.name)[:14]:<14} ")
    t.append(sparkline(util_hist, low=0, high=100, width=spark_w), style="green")
    t.append(_pct(g.utilization_gpu) + " ")
    total = g.memory_total_mib or 0
    t.append(sparkline(mem_hist, low=0, high=total or 1, width=spark_w), style="cyan")
    t.append(gpu_tail(g).ljust(tail_w))
    return t


def job_mark(job: JobInfo, *, percent: bool = True) -> Text:
    """A job's state in a few characters, for the instance row: `▶45%`, `✓`, `✗`, `■`."""
    mark, style = JOB_MARKS.get(job.state, ("?", ""))
    if job.failure and job.state != "stopped":
        mark, style = "✗", "bold red"
    if percent and job.state == "running" and job.progress_percent is not None:
        mark += format_percent(job.progress_percent)
    return Text(mark, style=style)


def job_line(job: JobInfo, now: float | None = None) -> Text:
    """`▶ train  running  45%  loss 0.523  ETA 12m05s` (remote text enters as plain text); a
    SLURM job also says its node, and how long it has run of its time limit."""
    t = job_mark(job, percent=False)
    t.append(f" {printable(job.name or job.id)}", style="bold")
    t.append(f"  {job_word(job.state)}")
    if job.state == "pending" and job.facts.scheduler_reason:
        t.append(f" ({printable(job.facts.scheduler_reason)})", style="yellow")
    elif job.state == "running" and job.facts.node and job.facts.scheduler_job_id:
        t.append(f" @{printable(job.facts.node)}", style="dim")
        if now is not None and job.facts.started_at is not None:
            ran = format_duration_s(max(0.0, now - job.facts.started_at))
            limit = job.facts.scheduler_time_limit
            t.append(f" {ran}/{format_duration_s(limit) if limit else '∞'}", style="dim")
    if job.state == "running" and job.progress_percent is not None:
        t.append(f"  {format_percent(job.progress_percent)}")
    if job.last_loss is not None:
        t.append(f"  loss {job.last_loss:.4g}", style="cyan")
    if job.state == "running" and job.eta_seconds is not None:
        t.append(f"  {format_eta_s(job.eta_seconds)}")
    if job.failure:
        t.append(f"  {printable(job.failure)}", style="red")
    return t


def process_line(row: GpuHolderRow, job_names: Mapping[str, str] | None = None) -> Text:
    """One GPU process: `gpu 0  pid 1843  15,872 MiB  root  job train  python train.py` (the job
    by its name in `job_names`, else its id); a driver entry no process here answers to by its
    host pid (remote text: printable)."""
    t = Text(f"gpu {'?' if row.gpu is None else row.gpu}  ")
    if row.pid is None:
        t.append(_("host pid {pid}").format(pid=row.host_pid if row.host_pid is not None else "?"), style="dim")
    else:
        t.append(f"pid {row.pid}")
    t.append(f"  {format_mib(row.used_memory_mib):>10}  ")
    if row.user:
        t.append(printable(row.user) + "  ", style="dim")
    if row.job:
        label = (job_names or {}).get(row.job) or row.job
        t.append(_("job {job}").format(job=printable(label)) + "  ", style="cyan")
    if row.command:
        t.append(printable(row.command))
    elif row.pid is None:
        t.append(_("[not visible in container]"), style="dim")
    return t
