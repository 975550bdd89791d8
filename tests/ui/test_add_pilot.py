"""The add form (`a`, and the welcome screen's add) driven with Pilot against real sshd: the
login is tested, a new host key is asked about, and only then is the config written and the
instance watched. The form's own refusals on an in-process host (no root)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from pilothelp import inproc_app, on_top, state_of
from sshhelp import config_text
from textual.widgets import Checkbox, Input, Static
from waiting import wait_for

from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import parse_settings
from gpu_tui.ui.factory import build_app, config_source
from gpu_tui.ui.screens import TrustKeyScreen, WelcomeScreen
from gpu_tui.ui.screens.add import AddInstanceScreen


def app_for(tmp: Path, text: str):
    cfg = tmp / "config.toml"
    cfg.write_text(text)
    settings = parse_settings(text)
    paths = Paths(cfg, tmp / "data", tmp / "log", tmp / "no-ssh-config", tmp / "no-known-hosts")
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    return build_app(config_source(settings, paths, SecretStore(environ={})), settings), paths


async def fill(pilot, app, **values: str) -> AddInstanceScreen:
    await pilot.press("a")
    form = app.screen
    assert isinstance(form, AddInstanceScreen)
    for field, value in values.items():
        form.query_one(f"#{field}", Input).value = value
    form.query_one("#save", Checkbox).value = False  # no keyring on a test machine
    form.query_one("#install", Checkbox).value = False
    return form


def error_text(form: AddInstanceScreen) -> str:
    return str(form.query_one("#error", Static).render())


async def test_add_asks_about_the_key_then_watches_the_new_instance(
    sshd_factory, password_user, tmp_path: Path
) -> None:
    first, second = sshd_factory("first"), sshd_factory("second")
    text = "# mine\n" + config_text([first], connect_timeout=2.0)
    app, paths = app_for(tmp_path, text)
    paths.app_known_hosts.write_text(first.host_public_key_line + "\n")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "first") == "online")
        # a wrong password stays in the form and writes nothing
        form = await fill(
            pilot,
            app,
            login=f"ssh -p {second.port} {password_user.name}@{second.host}",
            password="wrong",
            rate="1.5",
            name="second",
        )
        await pilot.press("enter")
        await wait_for(pilot, lambda: on_top(app, TrustKeyScreen))
        await pilot.click("#trust")
        await wait_for(pilot, lambda: "nothing written" in error_text(form))
        assert "refused the login" in error_text(form)
        assert (tmp_path / "config.toml").read_text() == text
        # the right one: the key is already trusted now, so straight in
        form.query_one("#password", Input).value = password_user.password
        form.query_one("#login", Input).focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, AddInstanceScreen))
        written = (tmp_path / "config.toml").read_text()
        assert written.startswith(text) and password_user.password not in written
        entry = tomllib.loads(written)["instances"][-1]
        assert entry == {
            "name": "second",
            "host": second.host,
            "port": second.port,
            "user": password_user.name,
            "provider": "generic",
            "hourly_rate": 1.5,
        }
        assert "second" in app.fleet.views
        await wait_for(pilot, lambda: state_of(app, "second") == "online")  # the typed password, in memory
        assert app.fleet.burn_rate() == pytest.approx(3.0)


async def test_refusals_stay_in_the_form(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet()
    inst = fleet.settings.instances[0]
    app = inproc_app(tmp_path, fleet)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.fleet is not None)
        form = await fill(pilot, app, login="ssh -p 70000 root@h")
        await pilot.press("enter")
        await wait_for(pilot, lambda: "port" in error_text(form))
        form.query_one("#login", Input).value = f"ssh -p {inst.port} root@{inst.host}"
        form.query_one("#rate", Input).value = "cheap"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "hourly price" in error_text(form))
        form.query_one("#rate", Input).value = ""
        form.query_one("#name", Input).value = "bad name"
        await pilot.press("enter")
        await wait_for(pilot, lambda: "letters, digits" in error_text(form))
        await pilot.press("escape")
        assert not isinstance(app.screen, AddInstanceScreen)


async def test_welcome_screen_adds_the_first_instance(sshd_instance, tmp_path: Path) -> None:
    app, paths = app_for(tmp_path, "")
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(app.screen, WelcomeScreen)
        await pilot.press("a")
        await wait_for(pilot, lambda: on_top(app, AddInstanceScreen))
        await pilot.press("escape")
        await wait_for(pilot, lambda: on_top(app, WelcomeScreen))
        await pilot.press("a")
        await wait_for(pilot, lambda: on_top(app, AddInstanceScreen))
        form = app.screen
        form.query_one(
            "#login", Input
        ).value = f"ssh -p {sshd_instance.port} -i {sshd_instance.client_key_path} root@{sshd_instance.host}"
        form.query_one("#install", Checkbox).value = False
        form.query_one("#save", Checkbox).value = False
        await pilot.press("enter")
        await wait_for(pilot, lambda: on_top(app, TrustKeyScreen))
        await pilot.click("#trust")
        await wait_for(pilot, lambda: app.return_value is not None)
    assert app.return_value == "config"  # the CLI reopens the dashboard on the new config
    entry = tomllib.loads((tmp_path / "config.toml").read_text())["instances"][0]
    assert entry["port"] == sshd_instance.port and entry["identity_file"] == str(sshd_instance.client_key_path)
