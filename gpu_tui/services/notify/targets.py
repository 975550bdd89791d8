"""Where notifications go: the config's `[notify] urls` and the targets `notify add` kept in the
keyring (one entry, `notify:targets`, holding a JSON list: a URL is a secret).

`targets()` numbers them as `notify list` shows them: the config's first, then the keyring's.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import SecretStr

from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import Settings
from gpu_tui.core.errors import InputError, SecretError
from gpu_tui.core.i18n import _
from gpu_tui.services.notify.send import AUTODL_WECHAT, Target
from gpu_tui.services.providers.autodl_balance import TOKEN_NAME

__all__ = [
    "KEYRING_NAME",
    "NotifySetup",
    "add_target",
    "for_event",
    "keyring_targets",
    "load_setup",
    "remove_target",
    "targets",
]

KEYRING_NAME = "notify:targets"
"""The keyring username (service `gpu-tui`) of the targets `notify add` keeps."""

log = logging.getLogger(__name__)


def keyring_targets(store: SecretStore) -> list[tuple[str, tuple[str, ...] | None]]:
    """(url, events or None = the config's `[notify] events`), in the order they were added."""
    raw = store.get_password(KEYRING_NAME)
    if raw is None:
        return []
    try:
        items = json.loads(raw.get_secret_value())
        return [(str(i["url"]), None if i.get("events") is None else tuple(i["events"])) for i in items]
    except (ValueError, KeyError, TypeError):
        log.warning("keyring entry %s is not a list of targets; ignored", KEYRING_NAME)
        return []


def _save(store: SecretStore, items: Sequence[tuple[str, tuple[str, ...] | None]]) -> None:
    if not items:
        store.delete_password(KEYRING_NAME)
        return
    text = json.dumps([{"url": url, "events": None if ev is None else list(ev)} for url, ev in items])
    try:
        store.set_password(KEYRING_NAME, SecretStr(text))
    except SecretError:
        raise SecretError(
            _(
                "cannot keep the target in the keyring ({problem}); list it in the config's [notify] urls instead"
            ).format(problem=store.keyring_problem)
        ) from None


def targets(settings: Settings, store: SecretStore | None) -> list[Target]:
    """Every target, numbered from 1: the config's URLs, then the keyring's."""
    events = settings.notify.events
    out = [Target(n, SecretStr(url), events, "config") for n, url in enumerate(settings.notify.urls, 1)]
    if store is not None:
        for url, own in keyring_targets(store):
            out.append(Target(len(out) + 1, SecretStr(url), events if own is None else own, "keyring"))
    return out


def for_event(all_targets: Sequence[Target], event: str) -> list[Target]:
    return [t for t in all_targets if event in t.events]


def add_target(store: SecretStore, url: str, events: tuple[str, ...] | None) -> bool:
    """Keep `url` in the keyring; False when it is there already (its events are then updated)."""
    items = keyring_targets(store)
    for i, (known, _ev) in enumerate(items):
        if known == url:
            items[i] = (url, events)
            _save(store, items)
            return False
    items.append((url, events))
    _save(store, items)
    return True


def remove_target(settings: Settings, store: SecretStore, number: int) -> Target:
    """Forget target `number` (as `notify list` numbers them); InputError for a config one."""
    every = targets(settings, store)
    match = next((t for t in every if t.number == number), None)
    if match is None:
        raise InputError(
            _("no target number {n}; `gpu-tui notify list` shows {count}").format(n=number, count=len(every))
        )
    if match.source == "config":
        raise InputError(_("target {n} is in the config file's [notify] urls; delete it there").format(n=number))
    items = keyring_targets(store)
    del items[number - len(settings.notify.urls) - 1]
    _save(store, items)
    return match


@dataclass(frozen=True, slots=True)
class NotifySetup:
    """What the dashboard needs to send: the targets and, for autodl-wechat, the AutoDL token."""

    targets: tuple[Target, ...]
    wechat_token: SecretStr | None


def load_setup(settings: Settings, store: SecretStore) -> NotifySetup:
    """Blocking (the keyring): run it in a thread."""
    every = targets(settings, store)
    token = store.get_password(TOKEN_NAME) if any(t.url.get_secret_value() == AUTODL_WECHAT for t in every) else None
    return NotifySetup(tuple(every), token)
