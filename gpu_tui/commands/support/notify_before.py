"""The notification targets go to an instance before `run` starts a job there and before
`autostop` arms its watchdog, so the instance reports their end itself (issue 15)."""

from __future__ import annotations

import sys

from gpu_tui.commands.support.output import error_line
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import _
from gpu_tui.remote.host import Host
from gpu_tui.services.notify.ship import ship_configured

__all__ = ["ship_before"]


async def ship_before(host: Host, inst: InstanceConfig, settings: Settings, *, show_notes: bool) -> None:
    """Ship the targets; with `show_notes`, say which the instance cannot send. A failure is said
    and never keeps the job or the watchdog from starting."""
    try:
        notes = await ship_configured(host, inst, settings, SecretStore())
    except GpuTuiError as exc:
        sys.stderr.write(
            _("gpu-tui: note: the instance's notification targets were not updated: {error}").format(
                error=error_line(exc)
            )
            + "\n"
        )
        return
    for warning in notes if show_notes else ():
        print(_("note: {warning}").format(warning=warning))
