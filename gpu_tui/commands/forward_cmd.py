"""`gpu-tui forward NAME PORT[:LOCAL]... [--bind ADDR]`: instance ports on this machine, until Ctrl+C.

Over gpu-tui's own connection (stored credentials: the env var, then the keyring; no OpenSSH
client). Each port is checked on the instance first, then listened on locally; the local URLs
go to stdout, what happens meanwhile to stderr. A dropped link is reconnected with backoff while
the listeners stay (a connection meanwhile is closed at once). Ctrl+C closes everything, exit 130.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import Settings
from gpu_tui.core.errors import AuthFailed, GpuTuiError, HostKeyChanged, HostKeyUnknown, RemoteError, error_line
from gpu_tui.core.forwardspec import ForwardSpec, loopback_only
from gpu_tui.core.i18n import _
from gpu_tui.core.text import printable
from gpu_tui.remote.backoff import backoff_delay
from gpu_tui.remote.cancels import raise_lost_cancel
from gpu_tui.remote.ssh import SshHost
from gpu_tui.services.forwards import ForwardEvent, Forwards
from gpu_tui.services.hosts import build_ssh_host

__all__ = ["run_forward"]

RETRY_BASE, RETRY_CAP = 0.5, 30.0
"""Reconnect backoff (seconds): the first retry comes quickly, as an sshd restart takes a moment."""
FATAL = (AuthFailed, HostKeyChanged, HostKeyUnknown)
"""Failures that retrying cannot mend: they end the command (exit 3)."""


def _note(text: str) -> None:
    sys.stderr.write(f"gpu-tui: {text}\n")
    sys.stderr.flush()


def _report(event: ForwardEvent) -> None:
    if event.kind == "failed" and event.message is not None:
        _note(_("port {port}: {problem}").format(port=event.remote, problem=event.message))
    elif event.kind == "recovered":
        _note(_("port {port}: connections go through again").format(port=event.remote))


def _reason(why: BaseException | None) -> str:
    if why is None:
        return _("closed")
    if isinstance(why, GpuTuiError):
        return error_line(why)
    return printable(str(why).strip() or type(why).__name__)  # asyncssh's words


async def _reconnect(host: SshHost) -> None:
    attempt = 0
    while True:
        await asyncio.sleep(backoff_delay(attempt, base=RETRY_BASE, cap=RETRY_CAP))
        try:
            await host.connect()
            return
        except FATAL:
            raise
        except RemoteError as exc:
            if attempt == 0:
                _note(_("still unreachable ({error}); retrying with backoff").format(error=error_line(exc)))
            attempt += 1


async def _forward(host: SshHost, specs: list[ForwardSpec], bind: str) -> int:
    await host.connect()
    forwards = Forwards(on_change=_report)
    try:
        for spec in specs:
            fwd = await forwards.open(host.name, host, spec, bind)
            label = f"  ({_(fwd.label)})" if fwd.label else ""
            print(
                _("{url}  ->  {name} port {port}").format(url=fwd.url, name=host.name, port=fwd.remote) + label,
                flush=True,
            )
        if not loopback_only(bind):
            _note(
                _("listening on {bind}: other machines that reach this one can use these ports too").format(bind=bind)
            )
        _note(_("forwarding; press Ctrl+C to stop"))
        while True:
            raise_lost_cancel()  # a Ctrl+C as a connect or an open finished: asyncssh's wait_for lost it
            why = await host.wait_closed()
            reason = _reason(why)
            _note(
                _("{name}: link lost ({reason}); reconnecting, the local ports stay open").format(
                    name=host.name, reason=reason
                )
            )
            await _reconnect(host)
            _note(_("{name}: reconnected; forwards are back").format(name=host.name))
    finally:
        opened = any(forwards.of(host.name))
        forwards.close_all()
        await host.close()
        if opened:
            _note(_("forwards closed"))


def run_forward(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    inst = settings.instance(args.name)
    host = build_ssh_host(inst, settings, paths, SecretStore(), sighting=True)
    # KeyboardInterrupt (Ctrl+C) cancels _forward, whose clean-up closes the listeners; the CLI
    # turns it into exit 130; GpuTuiErrors become one line and exit 2 or 3 there too
    return asyncio.run(_forward(host, list(args.specs), args.bind))
