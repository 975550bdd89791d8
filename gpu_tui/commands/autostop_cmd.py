"""`gpu-tui autostop NAME [--idle D] [--after-job JOB] [--before CMD] [--cancel | --status]`."""

from __future__ import annotations

import argparse
import asyncio
import sys

from gpu_tui.commands import EXIT_OK
from gpu_tui.commands.support.notify_before import ship_before
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.autostop import AutostopStatus
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_duration_exact_s
from gpu_tui.remote.host import Host
from gpu_tui.services import autostop as svc
from gpu_tui.services.hosts import build_ssh_host

__all__ = ["run_autostop", "plan_from_args", "status_words"]


def plan_from_args(args: argparse.Namespace, settings: Settings) -> svc.AutostopPlan:
    """The watchdog's plan: the options given, else the config's settings and the defaults."""
    s = settings.settings
    return svc.AutostopPlan(
        idle_seconds=args.idle if args.idle is not None else s.idle_minutes * 60,
        gpu_idle_percent=s.idle_util_percent,
        check_seconds=args.check_every or svc.DEFAULT_CHECK_SECONDS,
        cpu_busy_cores=args.cpu_cores or svc.DEFAULT_CPU_CORES,
        after_job=args.after_job,
        before=args.before,
        before_timeout_seconds=args.before_timeout or svc.DEFAULT_BEFORE_TIMEOUT,
    )


def _refuse_mixed(args: argparse.Namespace) -> None:
    flag = "--cancel" if args.cancel else "--status" if args.status else None
    if flag is None:
        return
    if args.cancel and args.status:
        raise InputError(_("--cancel and --status do not go together"))
    given = [
        o
        for o, v in (
            ("--idle", args.idle),
            ("--after-job", args.after_job),
            ("--before", args.before),
            ("--before-timeout", args.before_timeout),
        )
        if v is not None
    ]
    if given:
        raise InputError(_("{flag} takes no other option (got {options})").format(flag=flag, options=", ".join(given)))


async def _arm(args: argparse.Namespace, settings: Settings, host: Host, inst: InstanceConfig) -> int:
    plan = plan_from_args(args, settings)
    await ship_before(host, inst, settings, show_notes=True)  # the instance says when it shuts down
    armed = await svc.arm(host, inst, plan)
    if armed.after_job_id:
        what = _("job {job} ends").format(job=armed.after_job_id)
    else:
        what = _("no gpu-tui job is running")
    idle = format_duration_exact_s(plan.idle_seconds)
    if armed.replaced_pid:
        head = _("autostop armed (pid {pid}, replacing pid {old}): shuts down after {idle} idle").format(
            pid=armed.pid, old=armed.replaced_pid, idle=idle
        )
    else:
        head = _("autostop armed (pid {pid}): shuts down after {idle} idle").format(pid=armed.pid, idle=idle)
    print(f"{inst.name}: {head}")
    print(
        "  "
        + _("idle = {what}, every GPU under {gpu}%, CPU under {cores} core; checked every {every}").format(
            what=what,
            gpu=plan.gpu_idle_percent,
            cores=f"{plan.cpu_busy_cores:g}",
            every=format_duration_exact_s(plan.check_seconds),
        )
    )
    if plan.before and plan.before.strip():
        limit = format_duration_exact_s(plan.before_timeout_seconds)
        first = _("first: {command} (at most {limit})").format(command=printable(plan.before.strip()), limit=limit)
        print(f"  {first}")
    print("  " + _("then: {command}").format(command=printable(armed.shutdown_line)))
    print("  " + _("log: {path}").format(path=f"{inst.state_dir.rstrip('/')}/autostop.log"))
    if armed.after_job_id and armed.after_job_ended:
        print(
            "  "
            + _("note: job {job} has already ended; only the GPUs and the CPU are waited for").format(
                job=armed.after_job_id
            )
        )
    return EXIT_OK


async def _cancel(host: Host, inst: InstanceConfig) -> int:
    pid = await svc.cancel(host, inst)
    words = _("autostop cancelled (pid {pid})").format(pid=pid) if pid else _("autostop is not armed")
    print(f"{inst.name}: {words}")
    return EXIT_OK


def status_words(st: AutostopStatus) -> str:
    """`autostop in 12m30s`, `autostop armed (busy)`... (AutostopStatus.summary's words) in the
    language in force."""
    if st.state == "stopping":
        return _("autostop: shutting down")
    if st.state == "failed":
        return _("autostop: shutdown failed")
    if st.state == "idle" and st.seconds_left is not None:
        text = _("autostop in {left}").format(left=format_duration_exact_s(max(1, st.seconds_left)))
    elif st.state == "busy":
        text = _("autostop armed (busy)")
    else:
        text = _("autostop armed")
    return _("{summary} (last shutdown failed)").format(summary=text) if st.failure else text


async def _status(host: Host, inst: InstanceConfig) -> int:
    st = await svc.read_status(host, inst)
    if not st.armed:
        print(_("{name}: autostop is not armed").format(name=inst.name))
    else:
        print(
            _("{name}: {summary} (pid {pid}; idle time {idle})").format(
                name=inst.name, summary=status_words(st), pid=st.pid, idle=format_duration_exact_s(st.idle_seconds or 0)
            )
        )
        if st.reason:
            why = _("busy: {reason}") if st.state == "busy" else _("note: {reason}")
            print("  " + why.format(reason=printable(st.reason)))
        if st.failure:
            print("  " + _("failed earlier: {failure}").format(failure=printable(st.failure)))
    if st.last_line:
        print("  " + _("last: {line}").format(line=printable(st.last_line)))
    return EXIT_OK


async def _main(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    _refuse_mixed(args)
    inst = settings.instance(args.name)
    host = build_ssh_host(inst, settings, paths, SecretStore(), sighting=True)
    await host.connect()
    try:
        if args.cancel:
            return await _cancel(host, inst)
        if args.status:
            return await _status(host, inst)
        return await _arm(args, settings, host, inst)
    finally:
        await host.close()


def run_autostop(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    try:
        return asyncio.run(_main(args, settings, paths))
    except KeyboardInterrupt:
        return 130
    finally:
        sys.stdout.flush()
