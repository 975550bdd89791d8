"""The dashboard's keys that change which instances are watched and how: `a` add, `i` edit,
`R` reconnect (asking the password after `auth failed`), `K` trust a host key."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from pydantic import SecretStr

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import N_, _
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.dashboard.context import DashboardContext
from gpu_tui.ui.screens import PasswordAnswer, PasswordScreen, TrustKeyScreen
from gpu_tui.ui.screens.add import Added, AddInstanceScreen
from gpu_tui.ui.screens.edit import EditInstanceScreen

__all__ = ["HOST_KEY_STATES", "RETRY_STATES", "add", "edit", "reconnect", "trust_key"]

HOST_KEY_STATES = ("host key changed", "unknown host key")
RETRY_STATES = ("offline", "auth failed", "connecting", "stopped")
SAVED = {"added": N_("added {name} in {path}"), "updated": N_("updated {name} in {path}")}


def add(ctx: DashboardContext) -> None:
    opened = ctx.opened
    if opened is None or opened.onboarder is None:
        return

    def added(result: Added | None) -> None:
        fleet = ctx.fleet
        if result is None or fleet is None:
            return
        fleet.add(result.config, result.host)
        ctx.repaint(result.config.name)
        said = _(SAVED.get(result.how, SAVED["updated"]))
        ctx.notify(said.format(name=result.config.name, path=ctx.source.config_path), markup=False)
        if result.warning:
            ctx.notify(result.warning, title=_("keyring"), severity="warning", timeout=10, markup=False)

    ctx.push(AddInstanceScreen(opened.onboarder), added)


def edit(ctx: DashboardContext, view: InstanceView) -> None:
    opened = ctx.opened
    if opened is None or opened.onboarder is None:
        return

    async def watch_edited(inst: InstanceConfig) -> None:
        fleet, make_host = ctx.fleet, opened.make_host
        if fleet is None or make_host is None:
            return
        # a new host (the key file may have changed), built off the loop: it may ask the keyring
        host = await asyncio.to_thread(make_host, inst)
        fleet.add(inst, host)
        ctx.repaint(inst.name)
        ctx.notify(_("saved {name} in {path}").format(name=inst.name, path=ctx.source.config_path), markup=False)

    def edited(inst: InstanceConfig | None) -> None:
        if inst is not None:
            ctx.start(watch_edited(inst), group="edit")

    ctx.push(EditInstanceScreen(view.config, opened.onboarder.update), edited)


def reconnect(ctx: DashboardContext, view: InstanceView) -> None:
    fleet, opened = ctx.fleet, ctx.opened
    if fleet is None:
        return
    if view.shown_state == "auth failed" and opened is not None and opened.use_password is not None:
        _ask_password(ctx, view)
        return
    if view.shown_state == "stopped":
        fleet.watch_again(view.name)
    else:
        fleet.retry(view.name)
    ctx.notify(_("reconnecting {name}…").format(name=view.name), markup=False)


def _ask_password(ctx: DashboardContext, view: InstanceView) -> None:
    name = view.name
    login = f"{view.config.user}@{view.config.host}:{view.config.port}"
    opened = ctx.opened
    assert opened is not None and opened.use_password is not None
    use, save = opened.use_password, opened.save_password

    def done(answer: PasswordAnswer | None) -> None:
        fleet = ctx.fleet
        if answer is None or fleet is None:
            return
        use(name, answer.password)
        fleet.retry(name)
        ctx.notify(_("connecting to {name} with the password you typed").format(name=name), markup=False)
        if answer.save and save is not None:
            ctx.start(_save_password(ctx, save, name, answer.password), group="save-password")

    ctx.push(PasswordScreen(name, login, view.message, can_save=save is not None), done)


async def _save_password(
    ctx: DashboardContext, save: Callable[[str, SecretStr], None], name: str, password: SecretStr
) -> None:
    """The keyring may block for seconds: it runs in a thread, the loop only awaits it."""
    try:
        await asyncio.to_thread(save, name, password)
    except GpuTuiError as exc:
        ctx.notify(
            _("{error} (kept in memory for this session)").format(error=exc),
            title=_(exc.title),
            severity="warning",
            timeout=10,
            markup=False,
        )
    else:
        ctx.notify(_("password for {name} saved in the keyring").format(name=name), markup=False)


def trust_key(ctx: DashboardContext, view: InstanceView) -> None:
    if view.key_line is None or view.fingerprint is None or ctx.opened is None:
        return
    changed = view.shown_state == "host key changed"
    address = f"{view.config.host}:{view.config.port}"
    key_line, name = view.key_line, view.name

    def done(trusted: bool | None) -> None:
        opened, fleet = ctx.opened, ctx.fleet
        if trusted and opened is not None and fleet is not None:
            opened.trust(name, key_line)
            fleet.retry(name)
            ctx.notify(_("trusted the key of {name}; connecting").format(name=name), markup=False)

    ctx.push(TrustKeyScreen(name, address, view.fingerprint, changed), done)
