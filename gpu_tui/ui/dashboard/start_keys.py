"""The dashboard's `p` key: power the selected stopped instance on through its provider's API
(an imported RunPod, Vast.ai or AutoDL Pro instance whose token is stored), wait until SSH
answers, and watch it again, at its new endpoint when the start moved it."""

from __future__ import annotations

import asyncio
import time

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.i18n import _
from gpu_tui.services.fleet import InstanceView
from gpu_tui.services.providers import LABELS
from gpu_tui.services.providers.ops import has_api, refreshed_fields, start_instance
from gpu_tui.ui.dashboard.context import DashboardContext

__all__ = ["StartKeys"]


class StartKeys:
    """Holds which instances are being powered on, so `p` is not offered twice for one."""

    def __init__(self, ctx: DashboardContext) -> None:
        self._ctx = ctx
        self.starting: set[str] = set()

    def check(self, view: InstanceView | None) -> bool | None:
        opened = self._ctx.opened
        if not self._ctx.source.remote or opened is None or not opened.providers or opened.make_host is None:
            return False  # no provider token stored: the key means nothing here
        if view is None or view.name in self.starting or view.billing:
            return None
        ok = (
            view.shown_state in ("stopped", "offline")
            and has_api(view.config)
            and view.config.provider in opened.providers
        )
        return True if ok else None

    def power_on(self, view: InstanceView) -> None:
        if self.check(view) is not True:
            return
        self.starting.add(view.name)
        self._ctx.notify(
            _("powering {name} on through the {provider} API…").format(
                name=view.name, provider=LABELS[view.config.provider]
            ),
            timeout=5,
            markup=False,
        )
        self._ctx.start(self._worker(view.config), group="power_on")

    async def _worker(self, inst: InstanceConfig) -> None:
        opened, fleet = self._ctx.opened, self._ctx.fleet
        assert opened is not None and opened.make_host is not None and fleet is not None
        try:
            result = await start_instance(inst, opened.providers[inst.provider])
        finally:
            self.starting.discard(inst.name)
        if not result.ok:
            self._ctx.notify(
                f"{inst.name}: {result.detail}", title=_("power on"), severity="error", timeout=30, markup=False
            )
            return
        cfg = inst
        fields = refreshed_fields(inst, result)
        if fields:
            # the start moved it or changed its price: the config follows
            cfg = inst.model_copy(update=fields)
            if opened.onboarder is not None:
                cfg = await asyncio.to_thread(opened.onboarder.update, inst.name, fields)
        if opened.billing is not None:
            opened.billing.powered_on(cfg, time.time())
        fleet.add(cfg, opened.make_host(cfg))
        self._ctx.notify(f"{inst.name}: {result.detail}", timeout=10, markup=False)
