"""What the instances could not send: when the dashboard (re)connects to an instance, its
notification outbox is read and any send that failed there (a dead webhook, no network) is
shown once, so a notice that never reached the phone does not go unnoticed."""

from __future__ import annotations

import logging

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import _, ngettext
from gpu_tui.core.text import printable
from gpu_tui.remote.host import Host
from gpu_tui.services.notify.instance import SentEvent, read_outbox
from gpu_tui.ui.dashboard.context import DashboardContext

__all__ = ["OutboxWatch", "failed_sends_text"]

log = logging.getLogger(__name__)

FIRST_LOOK_SECONDS = 24 * 3600.0
"""On the first connect of a session, failures of the last day are shown (older ones were seen
or no longer matter)."""


def failed_sends_text(name: str, sent: list[SentEvent]) -> str | None:
    """One notice for the failed sends in `sent`, or None when every send got through."""
    failed = [(s, t) for s in sent for t in s.targets if not t.ok]
    if not failed:
        return None
    head = ngettext(
        "{name}: {n} notification could not be sent from the instance",
        "{name}: {n} notifications could not be sent from the instance",
        len(failed),
    ).format(name=name, n=len(failed))
    lines = [head] + [
        f"{printable(s.title)} -> {printable(t.target_masked)}: {printable(t.error or '?')}" for s, t in failed[-3:]
    ]
    return "\n".join(lines)


class OutboxWatch:
    """Reads an instance's outbox each time it comes online."""

    def __init__(self, ctx: DashboardContext) -> None:
        self._ctx = ctx
        self._since: dict[str, float] = {}

    def connected(self, name: str) -> None:
        ctx = self._ctx
        opened, fleet = ctx.opened, ctx.fleet
        if opened is None or opened.ship_notify is None or fleet is None or name not in fleet.hosts:
            return
        now = ctx.clock()
        since = self._since.get(name, now - FIRST_LOOK_SECONDS)
        self._since[name] = now
        ctx.start(self._read(name, fleet.hosts[name], fleet.views[name].config, since), group=f"outbox-{name}")

    async def _read(self, name: str, host: Host, inst: InstanceConfig, since: float) -> None:
        try:
            sent = await read_outbox(host, inst, since)
        except GpuTuiError as exc:
            log.info("%s: notification outbox: %s", name, exc.english)
            return
        text = failed_sends_text(name, sent)
        if text is not None:
            self._ctx.notify(text, title=_("notifications"), severity="warning", timeout=20, markup=False)
