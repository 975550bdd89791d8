"""`gpu-tui run | jobs | logs | stop`: detached jobs on an instance, from the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import sys
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from gpu_tui.commands import EXIT_OK
from gpu_tui.commands.support.cells import format_rows, truncate
from gpu_tui.commands.support.notify_before import ship_before
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.fit.oomfit import oom_fit_text
from gpu_tui.core.i18n import N_, _, ngettext
from gpu_tui.core.jobs import JobInfo, JobRequest, RunAsk, new_job_id
from gpu_tui.core.metrics.holders import Attribution
from gpu_tui.core.text import printable
from gpu_tui.core.trainlog.failures import NO_SPACE
from gpu_tui.core.trainlog.hints import disk_full, disk_full_text, frame_text, hint_for
from gpu_tui.core.units import format_bytes, format_iso_utc, format_percent
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import command_line
from gpu_tui.services.conda import resolve_env
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.follow import LogFollower
from gpu_tui.services.jobs.sched import scheduler_for
from gpu_tui.services.monitor.freegpu import read_holders

log = logging.getLogger(__name__)

__all__ = ["run_job_command", "jobs_json"]

T = TypeVar("T")

HEADER = (N_("ID"), N_("NAME"), N_("STATE"), N_("PROGRESS"), N_("LOSS"), N_("LOG"), N_("COMMAND"))
STATES = {
    "pending": N_("pending"),
    "running": N_("running"),
    "succeeded": N_("succeeded"),
    "failed": N_("failed"),
    "stopped": N_("stopped"),
}
"""The state words of CONTRACTS.md as the table shows them (`--json` keeps the English ones)."""


async def _with_host(
    settings: Settings, paths: Paths, name: str, body: Callable[[Host, InstanceConfig], Awaitable[T]]
) -> T:
    inst = settings.instance(name)
    host = build_ssh_host(inst, settings, paths, SecretStore(), sighting=True)
    await host.connect()
    try:
        return await body(host, inst)
    finally:
        await host.close()


def _setenv(pairs: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise InputError(_("--setenv {pair!r}: write it as KEY=VALUE").format(pair=pair))
        out.append((key, value))
    return tuple(out)


def _finite(value: float | None) -> float | None:
    """JSON has no NaN: a NaN or infinite loss is reported as null (`failure` says why)."""
    return value if value is not None and math.isfinite(value) else None


def _iso(epoch: int | None) -> str | None:
    return None if epoch is None else format_iso_utc(epoch)


def jobs_json(infos: list[JobInfo], state_dir_abs: str | None, holders: Attribution | None = None) -> dict[str, object]:
    """The `jobs --json` object of CONTRACTS.md (`holders`: who holds the GPUs now, for each
    running job's `vram_mib`)."""
    out = []
    for j in infos:
        req = j.facts.request
        progress = None
        if j.progress_percent is not None or j.eta_seconds is not None or any(c is not None for c in j.progress_counts):
            epoch, epochs, step, steps = j.progress_counts
            progress = {
                "percent": _finite(j.progress_percent),
                "eta_seconds": j.eta_seconds,
                "epoch": epoch,
                "epochs": epochs,
                "step": step,
                "steps": steps,
            }
        out.append(
            {
                "id": j.id,
                "name": req.get("name"),
                "command": req.get("command"),
                "conda_env": req.get("conda_env"),
                "cwd": req.get("cwd"),
                "state": j.state,
                "exit_code": j.facts.exit_code,
                "started_at": _iso(j.facts.started_at),
                "finished_at": _iso(j.facts.finished_at),
                "log_path": f"{state_dir_abs}/jobs/{j.id}/log" if state_dir_abs else None,
                "log_bytes": j.facts.log_bytes,
                "failure": j.failure,
                "hint": hint_for(j.failure),
                "fit": _fit_json(j),
                "disk": _disk_json(j),
                "frame": j.frame,
                "progress": progress,
                "last_loss": _finite(j.last_loss),
                "scheduler_job_id": j.facts.scheduler_job_id,
                "node": j.facts.node,
                "reason": j.facts.scheduler_reason,
                "vram_mib": holders.job_mib(j.id) if holders is not None and j.state == "running" else None,
            }
        )
    return {"jobs": out}


def _fit_json(j: JobInfo) -> dict[str, object] | None:
    """`fit` of `jobs --json` (CONTRACTS.md): what `gpu-tui fit` says of an OOM job's model."""
    f = j.oom_fit
    if f is None:
        return None
    return {
        "model": f.model,
        "context": f.context,
        "batch": f.batch,
        "needs_gib": {mode: round(gib, 1) for mode, gib in f.needs},
        "gpu_gib": f.gpu_gib,
    }


def _disk_json(j: JobInfo) -> dict[str, object] | None:
    """`disk` of `jobs --json` (CONTRACTS.md): the filesystem a job that died of a full disk wrote to."""
    d = disk_full(j.facts.disk_full) if j.failure == NO_SPACE else None
    if d is None:
        return None
    return {"mount": d.mount, "size_bytes": d.size_bytes, "free_bytes": d.free_bytes, "use_percent": d.use_percent}


def _table(infos: list[JobInfo]) -> str:
    rows = [tuple(_(h) for h in HEADER)]
    for j in infos:
        state = _(STATES[j.state]) if j.state in STATES else j.state
        state += f" ({j.failure})" if j.failure else ""
        state += f" ({j.facts.scheduler_reason})" if j.state == "pending" and j.facts.scheduler_reason else ""
        pct = format_percent(j.progress_percent)
        loss = "-" if j.last_loss is None else f"{j.last_loss:.4g}"
        cmd = printable(str(j.facts.request.get("command") or "")).replace("\n", " ; ")
        log = format_bytes(j.facts.log_bytes)
        rows.append((j.id, printable(j.name or "-"), printable(state), pct, loss, log, _cut(cmd, 60)))
    lines = format_rows(rows)
    # what to do about each failure, under the table: a row stays one line at any width
    for j in infos:
        if hint := hint_for(j.failure):
            lines.append(f"{j.id}  {hint}")
        if j.oom_fit is not None:
            lines.append(f"{j.id}  {oom_fit_text(j.oom_fit)}")
        if j.frame is not None:
            lines.append(f"{j.id}  {printable(frame_text(j.frame))}")
        disk = disk_full(j.facts.disk_full) if j.failure == NO_SPACE else None
        if disk is not None:
            lines.append(f"{j.id}  {printable(disk_full_text(disk))}")
    return "\n".join(lines)


def _cut(text: str, cells: int) -> str:
    """The first `cells` cells of `text` (as `text[:60]` did for ASCII), a wide character never split."""
    return text if text.isascii() else truncate(text, cells)


async def _run(args: argparse.Namespace, host: Host, inst: InstanceConfig, settings: Settings) -> int:
    words = list(args.cmd)
    if not words:
        raise InputError(_("nothing to run: put the command after `--`, e.g. gpu-tui run NAME -- python train.py"))
    ask = RunAsk(gpus=args.gpus, partition=args.partition, time=args.time)
    # the scheduler refuses what it cannot do (and picks GPUs) before anything else is asked
    draft = JobRequest(id=new_job_id(), command=command_line(words), setenv=_setenv(args.setenv))
    draft = await scheduler_for(inst).prepare(host, inst, draft, ask)
    prefix = await resolve_env(host, args.env) if args.env else None
    req = replace(
        draft,
        cwd=args.cwd or inst.workdir,
        conda_env=args.env,
        conda_prefix=prefix,
        name=args.job_name,
        tmux=args.tmux,
        metrics=tuple(args.metrics),
    )
    await ship_before(host, inst, settings, show_notes=False)
    started = await jobsvc.start_job(host, inst, req, ask)
    print(started.id)
    return EXIT_OK


async def _jobs(args: argparse.Namespace, host: Host, inst: InstanceConfig) -> int:
    if args.prune:
        removed, freed = await jobsvc.prune_jobs(host, inst)
        if not args.json:
            print(
                ngettext(
                    "removed {n} finished job, {size} of logs",
                    "removed {n} finished jobs, {size} of logs",
                    len(removed),
                ).format(n=len(removed), size=format_bytes(freed))
            )
    infos = await jobsvc.list_jobs(host, inst)
    if args.json:
        holders = None
        if any(j.state == "running" for j in infos):
            try:
                holders, _scan = await read_holders(host, inst)
            except RemoteError as exc:  # the VRAM stays null; the listing is what was asked for
                log.info("%s: jobs: who holds the GPUs: %s", inst.name, exc)
        state_dir = await jobsvc.state_dir_path(host, inst)
        print(json.dumps(jobs_json(infos, state_dir, holders), ensure_ascii=False))
    elif infos:
        print(_table(infos))
    elif not args.prune:
        print(_("{name}: no jobs").format(name=inst.name))
    return EXIT_OK


async def _logs(args: argparse.Namespace, host: Host, inst: InstanceConfig) -> int:
    if args.n < 0:
        raise InputError(_("-n wants 0 or more lines"))
    job = await jobsvc.find_job(host, inst, args.job)
    # the window's last row without its newline is printed as a line; the follow starts afresh
    follower = LogFollower(host, inst, job.id, charset=job.charset)
    window = await follower.window(close=True)
    for line in window.lines[-args.n :] if args.n else ():
        print(line)
    if not args.follow:
        return EXIT_OK
    sys.stdout.flush()
    async for update in follower.updates(until_finished=True):
        for line in update.lines:
            print(line, flush=True)
    return EXIT_OK


async def _stop(args: argparse.Namespace, host: Host, inst: InstanceConfig) -> int:
    job = await jobsvc.find_job(host, inst, args.job)
    how = await jobsvc.stop_job(host, inst, job.id)
    print(f"{job.id}: {_stop_words(how)}")
    return EXIT_OK


def _stop_words(how: str) -> str:
    """How `stop` ended (`finished`, `stopped INT`...), for a person."""
    if how == "finished":
        return _("already finished")
    if how == "cancelled":
        return _("cancelled before it started")
    signal = how.removeprefix("stopped ")
    if signal != how and signal.isalpha():
        return _("stopped {signal}").format(signal=signal)
    return how


COMMANDS = {"jobs": _jobs, "logs": _logs, "stop": _stop}


def run_job_command(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    handler = COMMANDS.get(args.command)
    try:
        if handler is None:  # run: it also needs the settings (the notification targets)
            return asyncio.run(_with_host(settings, paths, args.name, lambda h, i: _run(args, h, i, settings)))
        return asyncio.run(_with_host(settings, paths, args.name, lambda h, i: handler(args, h, i)))
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout.flush()
