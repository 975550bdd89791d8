"""Verified shutdown: run the provider's shutdown ON the instance, then prove it went down.

An instance counts as stopped only once the far end closed our SSH connection AND one fresh
connection attempt fails. Anything else (the command failed, the link stayed up, the host was
unreachable to begin with, so nothing could be verified) is reported as NOT shut down: a
"done" that is not true is the costly mistake this exists to prevent.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

from pydantic import SecretStr

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import AuthFailed, ConnectionLost, GpuTuiError, RemoteError, Unreachable
from gpu_tui.core.i18n import _
from gpu_tui.core.power import shutdown_line
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import sh_c
from gpu_tui.services.sync.run import Transport, plan_sync, run_sync

__all__ = ["Before", "ShutdownResult", "shutdown_instance", "shutdown_many", "VERIFY_SECONDS", "pull_before"]

VERIFY_SECONDS = 30.0
"""How long the far end gets to close the connection after the shutdown command."""
COMMAND_SECONDS = 20.0


@dataclass(frozen=True, slots=True)
class ShutdownResult:
    """How one instance's shutdown ended."""

    name: str
    stopped: bool
    """True only when verified: the link closed and a fresh login failed."""
    detail: str
    """What happened, for the report (`stopped (verified in 1.2 s)`, `shutdown failed: ...`)."""
    seconds: float
    unreachable: bool = False
    """SSH could not reach it at all (a provider's API may still stop it: services/providers/ops.py)."""


async def _run_shutdown(host: Host, line: str) -> str | None:
    """Run the line; None when it was accepted (or the link died under it), else why not."""
    try:
        res = await host.run(sh_c(line) + " 2>&1", timeout=COMMAND_SECONDS)
    except ConnectionLost:
        return None  # the instance went down while the command ran: that is the point
    except RemoteError as exc:
        return _("the shutdown command did not finish: {error}").format(error=exc.message)
    if res.exit_status in (0, None):
        return None
    out = (res.stdout + res.stderr).strip().splitlines()
    return _("the shutdown command failed (exit {status}): {output}").format(
        status=res.exit_status, output=out[-1][:200] if out else _("no output")
    )


async def _still_reachable(make_host: Callable[[], Host]) -> str | None:
    """One fresh login: None when it fails as a stopped instance's would, else what answered."""
    probe = make_host()
    try:
        await probe.connect()
    except Unreachable:
        return None
    except AuthFailed:
        return _("it still answers SSH (the login was refused, but the machine is up)")
    except GpuTuiError as exc:
        return _("it still answers SSH ({reason})").format(reason=exc.shown_title)
    finally:
        await probe.close()
    return _("it still accepts logins")


Before = Callable[[InstanceConfig], Awaitable[str | None]]
"""A step before the shutdown (pull the results): None when done, else why the instance must
stay up (it is then not shut down)."""


async def shutdown_instance(
    inst: InstanceConfig,
    make_host: Callable[[], Host],
    *,
    verify_seconds: float = VERIFY_SECONDS,
    before: Before | None = None,
) -> ShutdownResult:
    """Shut one instance down and verify it; never raises for the instance's own failures."""
    started = time.monotonic()

    def result(stopped: bool, detail: str, unreachable: bool = False) -> ShutdownResult:
        return ShutdownResult(inst.name, stopped, detail, round(time.monotonic() - started, 2), unreachable)

    if before is not None:
        why = await before(inst)
        if why is not None:
            return result(False, _("not shut down: {reason}").format(reason=why))

    try:
        line = shutdown_line(inst.provider, provider_id=inst.provider_id, override=inst.shutdown_command)
    except GpuTuiError as exc:
        return result(False, _("not shut down: {reason}").format(reason=exc.message))
    host = make_host()
    try:
        try:
            await host.connect()
        except GpuTuiError as exc:
            return result(
                False,
                _("not shut down: cannot reach it to shut it down or verify ({error})").format(error=exc.line()),
                unreachable=True,
            )
        why = await _run_shutdown(host, line)
        if why is not None:
            return result(False, _("NOT shut down: {reason}").format(reason=why))
        try:
            await asyncio.wait_for(host.wait_closed(), verify_seconds)
        except TimeoutError:
            return result(
                False,
                _("NOT shut down: the shutdown command ran, but the instance was still up after {seconds:g} s").format(
                    seconds=verify_seconds
                ),
            )
    finally:
        await host.close()
    answer = await _still_reachable(make_host)
    if answer is not None:
        return result(False, _("NOT shut down: the link closed, but {answer}").format(answer=answer))
    # "stopped" and "NOT shut down" are CONTRACTS.md's words (in English)
    return result(True, _("stopped (verified in {seconds:.1f} s)").format(seconds=time.monotonic() - started))


async def shutdown_many(
    instances: Iterable[InstanceConfig],
    make_host: Callable[[InstanceConfig], Host],
    *,
    verify_seconds: float = VERIFY_SECONDS,
    before: Before | None = None,
) -> list[ShutdownResult]:
    """Every instance at once; results in the order given."""
    insts = list(instances)
    return list(
        await asyncio.gather(
            *(
                shutdown_instance(i, functools.partial(make_host, i), verify_seconds=verify_seconds, before=before)
                for i in insts
            )
        )
    )


def pull_before(
    make_host: Callable[[InstanceConfig], Host],
    config_path: str,
    password: Callable[[str], SecretStr | None] = lambda name: None,
) -> Before:
    """A `before` step that pulls each instance's sync dirs (`sync.local` set) first; one
    without sync configured goes straight to its shutdown."""

    async def pull(inst: InstanceConfig) -> str | None:
        if inst.sync.local is None:
            return None
        host = make_host(inst)
        try:
            await host.connect()
            transport = Transport(config_path, inst.name, password(inst.name))
            job = await plan_sync(host, inst, "pull", transport=transport)
            await run_sync(host, job, transport=transport)
        except GpuTuiError as exc:
            return _(
                "pulling its results first failed ({error}); to shut it down anyway: "
                "--no-sync on the command line, or 'Shut down' without pulling in the dashboard"
            ).format(error=exc.line())
        finally:
            await host.close()
        return None

    return pull
