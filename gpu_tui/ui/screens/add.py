"""`a`: add an instance by pasting its login command, as `gpu-tui add` does.

The login is tested before anything is written: a new host key is shown (fingerprint) and
trusted only on yes, a changed one is refused, a wrong password or an unreachable host stays in
the form as a message. The password is typed masked and goes to the keyring (or memory).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from pydantic import SecretStr
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from gpu_tui.config.logsetup import redact
from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import GpuTuiError, HostKeyUnknown
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.logincmd import guess_provider, parse_login, suggest_name
from gpu_tui.core.money.cost import parse_hourly_rate
from gpu_tui.remote.ssh import SshHost
from gpu_tui.services.onboard import NewInstance, Onboarder, check_login, final_name, install_app_key
from gpu_tui.ui.screens.form_css import compact_form_css, fit_labels
from gpu_tui.ui.screens.hostkey import TrustKeyScreen
from gpu_tui.ui.screens.localise import translate_bindings

__all__ = ["AddInstanceScreen", "Added"]

AUTO = "auto"


@dataclass(frozen=True, slots=True)
class Added:
    """An instance the form wrote to the config, with a host for the dashboard to watch."""

    how: str
    config: InstanceConfig
    host: SshHost
    warning: str | None = None


class AddInstanceScreen(ModalScreen[Added | None]):
    BINDINGS = [Binding("escape", "dismiss(None)", N_("Cancel"))]
    DEFAULT_CSS = compact_form_css("AddInstanceScreen")

    def __init__(self, onboarder: Onboarder) -> None:
        super().__init__()
        translate_bindings(self)
        self._onboarder = onboarder

    def compose(self) -> ComposeResult:
        currency = self._onboarder.settings.settings.currency
        with VerticalScroll():
            yield Static(
                Text.assemble(
                    (_("Add an instance"), "bold"), ("  " + _("paste the login command your provider shows"), "dim")
                )
            )
            with Horizontal(classes="row"):
                yield Label(_("Login"))
                yield Input(placeholder="ssh -p 23456 root@connect.westb.seetacloud.com", id="login")
            with Horizontal(classes="row"):
                yield Label(_("Password"))
                yield Input(password=True, placeholder=_("empty: use SSH keys"), id="password")
            with Horizontal(classes="row"):
                yield Label(_("{currency}/hour").format(currency=currency))
                yield Input(placeholder=_("hourly price, for the cost ticker (0 if unknown)"), id="rate")
            with Horizontal(classes="row"):
                yield Label(_("Name"))
                yield Input(placeholder=_("auto: from provider, region and port"), id="name")
            with Horizontal(classes="row"):
                yield Label(_("Provider"))
                options = [(_("guess from the host"), AUTO)] + [(p, p) for p in ("autodl", "runpod", "vast", "generic")]
                yield Select(options, value=AUTO, allow_blank=False, id="provider")
            yield Checkbox(_("save the password in the keyring"), value=True, id="save")
            yield Checkbox(
                _("install gpu-tui's key there (later logins and sync need no password)"), value=True, id="install"
            )
            yield Static("", id="error")
            with Horizontal(classes="buttons"):
                yield Button(_("Test and add"), id="add", variant="primary")
                yield Button(_("Cancel"), id="cancel")

    def on_mount(self) -> None:
        fit_labels(self)
        self.query_one("#login", Input).focus()

    def _value(self, field: str) -> str:
        return self.query_one(f"#{field}", Input).value.strip()

    def _read_form(self) -> tuple[NewInstance, SecretStr | None]:
        spec = parse_login(self._value("login"))
        choice = self.query_one("#provider", Select).value
        provider = choice if isinstance(choice, str) and choice != AUTO else guess_provider(spec.host)
        rate = parse_hourly_rate(self._value("rate"))
        name = self._value("name")
        if name:
            InstanceConfig(name=name, host=spec.host)  # the config's own name rules
        name = name or suggest_name(spec, provider, {i.name for i in self._onboarder.instances})
        raw = self.query_one("#password", Input).value
        password = SecretStr(raw) if raw else None
        if raw:
            redact(raw)
        return NewInstance(name=name, spec=spec, provider=provider, hourly_rate=rate), password

    def _say(self, text: str, style: str = "red") -> None:
        self.query_one("#error", Static).update(Text(text, style=style))

    @work(exclusive=True, group="add", exit_on_error=False)
    async def submit(self) -> None:
        try:
            new, password = self._read_form()
        except GpuTuiError as exc:
            self._say(exc.message)
            return
        except ValueError as exc:  # pydantic's name check
            self._say(
                _("name {name!r}: letters, digits, '.', '_' and '-' only ({kind})").format(
                    name=self._value("name"), kind=type(exc).__name__
                )
            )
            return
        button = self.query_one("#add", Button)
        button.disabled = True
        try:
            added = await self._add(new, password)
        finally:
            button.disabled = False
        if added is not None:
            self.dismiss(added)

    async def _add(self, new: NewInstance, password: SecretStr | None) -> Added | None:
        where = f"{new.spec.user}@{new.spec.host}:{new.spec.port}"
        self._say(_("logging in to {where}…").format(where=where), "dim")
        host = self._onboarder.login_host(new, password)
        try:
            try:
                await check_login(host)
            except HostKeyUnknown as exc:
                address = f"{new.spec.host}:{new.spec.port}"
                if not await self.app.push_screen_wait(TrustKeyScreen(new.name, address, exc.fingerprint, False)):
                    self._say(_("host key not trusted: nothing written"))
                    return None
                host.trust_presented_key(exc.key_line)
                await check_login(host)
            if self.query_one("#install", Checkbox).value:
                self._say(_("logged in; installing gpu-tui's key…"), "dim")
                await install_app_key(host, self._onboarder.paths)
            key_line = host.server_key_line()
        except GpuTuiError as exc:
            self._say(_("{error} (nothing written)").format(error=exc.line()))
            return None
        finally:
            await host.close()
        named = bool(self._value("name"))
        name = final_name(self._onboarder.paths, self._onboarder.instances, new, key_line, named=named)
        new = NewInstance(name=name, spec=new.spec, provider=new.provider, hourly_rate=new.hourly_rate)
        save = self.query_one("#save", Checkbox).value
        try:
            # the keyring can block for seconds: not on the UI's loop
            how, inst, dash_host, warning = await asyncio.to_thread(
                self._onboarder.finish, new, password, save_password=save
            )
        except GpuTuiError as exc:
            self._say(exc.line())
            return None
        return Added(how, inst, dash_host, warning)

    def on_input_submitted(self, _event: Input.Submitted) -> None:
        self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "add":
            self.submit()
        else:
            self.dismiss(None)
