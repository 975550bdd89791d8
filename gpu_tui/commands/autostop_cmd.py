"""`gpu-tui autostop NAME [--idle D] [--after-job JOB] [--before CMD] [--cancel | --status]`."""

from __future__ import annotations

import argparse
import asyncio
import sys

from gpu_tui.commands import EXIT_OK
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.durations import format_duration
from gpu_tui.core.errors import InputError
from gpu_tui.core.text import printable
from gpu_tui.remote.host import Host
from gpu_tui.services import autostop as svc
from gpu_tui.services.hosts import build_ssh_host

__all__ = ["run_autostop", "plan_from_args"]


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
        raise InputError("--cancel and --status do not go together")
    given = [o for o, v in (("--idle", args.idle), ("--after-job", args.after_job), ("--before", args.before),
                            ("--before-timeout", args.before_timeout)) if v is not None]
    if given:
        raise InputError(f"{flag} takes no other option (got {', '.join(given)})")


async def _arm(args: argparse.Namespace, settings: Settings, host: Host, inst: InstanceConfig) -> int:
    plan = plan_from_args(args, settings)
    armed = await svc.arm(host, inst, plan)
    what = f"job {armed.after_job_id} ends" if armed.after_job_id else "no gpu-tui job is running"
    again = f", replacing pid {armed.replaced_pid}" if armed.replaced_pid else ""
    print(
        f"{inst.name}: autostop armed (pid {armed.pid}{again}): "
        f"shuts down after {format_duration(plan.idle_seconds)} idle"
    )
    print(f"  idle = {what}, every GPU under {plan.gpu_idle_percent}%, CPU under {plan.cpu_busy_cores:g} core; "
          f"checked every {format_duration(plan.check_seconds)}")
    if plan.before and plan.before.strip():
        print(f"  first: {printable(plan.before.strip())} (at most {format_duration(plan.before_timeout_seconds)})")
    print(f"  then: {printable(armed.shutdown_line)}")
    print(f"  log: {inst.state_dir.rstrip('/')}/autostop.log")
    if armed.after_job_id and armed.after_job_ended:
        print(f"  note: job {armed.after_job_id} has already ended; only the GPUs and the CPU are waited for")
    return EXIT_OK


async def _cancel(host: Host, inst: InstanceConfig) -> int:
    pid = await svc.cancel(host, inst)
    print(f"{inst.name}: autostop cancelled (pid {pid})" if pid else f"{inst.name}: autostop is not armed")
    return EXIT_OK


async def _status(host: Host, inst: InstanceConfig) -> int:
    st = await svc.read_status(host, inst)
    if not st.armed:
        print(f"{inst.name}: autostop is not armed")
    else:
        print(f"{inst.name}: {st.summary()} (pid {st.pid}; idle time {format_duration(st.idle_seconds or 0)})")
        if st.reason:
            print(f"  {'busy' if st.state == 'busy' else 'note'}: {printable(st.reason)}")
        if st.failure:
            print(f"  failed earlier: {printable(st.failure)}")
    if st.last_line:
        print(f"  last: {printable(st.last_line)}")
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
