"""Keep each instance's copy of the notification targets current, so that it sends its own events
(job end, a failure while running, autostop) with the laptop closed.

The targets are shipped when they change (`notify add` / `remove`, to every instance reachable
then), before a job starts and before autostop is armed (so an instance that was off at `notify
add` has them by the time it matters), and by `notify test`. Only the targets that want an
instance event go; each keeps its own events.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.i18n import active_language
from gpu_tui.remote.host import Host
from gpu_tui.services.notify.instance import INSTANCE_EVENTS, install_notify
from gpu_tui.services.notify.send import Target
from gpu_tui.services.notify.targets import targets

__all__ = ["ship", "ship_configured"]


async def ship(
    host: Host, inst: InstanceConfig, every: Sequence[Target], currency: str, store: SecretStore | None = None
) -> list[str]:
    """Install the sender with the targets that want an instance event (none: the instance's copy
    is removed); the warnings install_notify gives (targets it cannot send, tools it lacks)."""
    chosen = [t for t in every if set(t.events) & set(INSTANCE_EVENTS)]
    events_of = {t.url.get_secret_value(): [e for e in t.events if e in INSTANCE_EVENTS] for t in chosen}
    union = sorted({e for wanted in events_of.values() for e in wanted})
    return await install_notify(
        host, inst, list(events_of), union, active_language(), currency=currency, store=store, events_of=events_of
    )


async def ship_configured(host: Host, inst: InstanceConfig, settings: Settings, store: SecretStore) -> list[str]:
    """`ship` with the configured targets (the config's and the keyring's); with none, the
    instance's copy is removed (a target removed while the instance was off stops there too)."""
    every = await asyncio.to_thread(targets, settings, store)
    return await ship(host, inst, every, settings.currency_of(inst), store)
