"""The dashboard driven by keys (Textual Pilot): what is about SSH (host keys, logins, a killed
sshd) against real sshd instances; the rest on in-process hosts (no root)."""

from __future__ import annotations

from pathlib import Path

from pilothelp import inproc_app, make_app, panel_text, state_of, steady
from textual.command import CommandList
from waiting import wait_for

from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import parse_settings
from gpu_tui.ui.factory import build_app, config_source
from gpu_tui.ui.screens import DetailScreen, HelpScreen, PasswordScreen, TrustKeyScreen, WelcomeScreen
from gpu_tui.ui.widgets import InstanceTable
from gpu_tui.ui.widgets.text_strips import TextStrips


async def test_instances_in_config_order_first_selected_and_live(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet(steady("h100", 100), steady("l40s", 30, gpus=8), steady("rtx4080", 7))
    names = fleet.names
    app = inproc_app(tmp_path, fleet)
    async with app.run_test(size=(100, 30)) as pilot:
        table = app.query_one(InstanceTable)
        await wait_for(pilot, lambda: table.row_count == 3)
        assert list(table.rows) == names
        assert table.selected_name == names[0]
        await wait_for(pilot, lambda: all(state_of(app, n) == "online" for n in names))
        await wait_for(pilot, lambda: "%" in panel_text(app) and "°C" in panel_text(app))
        await pilot.press("j")
        assert table.selected_name == names[1]
        await pilot.press("down", "k")
        assert table.selected_name == names[1]
        assert names[1] in panel_text(app)


async def test_detail_and_help_screens(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet()
    app = inproc_app(tmp_path, fleet, keys='\n[keys]\nhelp = "f1"\n')
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.fleet is not None and app.fleet.views["gpu"].frame is not None)
        await pilot.press("enter")
        assert isinstance(app.screen, DetailScreen)
        await pilot.pause(1.5)  # the 1 s tick keeps painting the main screen under the modal
        assert isinstance(app.screen, DetailScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, DetailScreen)
        await pilot.press("f1")  # remapped through [keys]
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("question_mark")  # the default key no longer opens help
        assert not isinstance(app.screen, HelpScreen)


async def test_the_detail_screen_is_kept_and_shows_the_instance_it_was_opened_on(inproc_fleet, tmp_path: Path) -> None:
    """One detail screen is composed and pushed again for each `enter`, on the instance selected
    then; hidden, it stops redrawing."""
    fleet = await inproc_fleet(steady("h100", 100), steady("l40s", 30, gpus=8))
    first, second = fleet.names
    app = inproc_app(tmp_path, fleet)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.fleet is not None and all(v.frame for v in app.fleet.views.values()))
        await pilot.press("enter")
        detail = app.screen
        assert isinstance(detail, DetailScreen)
        charts = detail.query_one("#charts", TextStrips)
        assert charts.text.plain.startswith(first) and "1x" in charts.text.plain
        await pilot.press("escape", "j", "enter")
        assert app.screen is detail
        assert charts.text.plain.startswith(second) and "8x" in charts.text.plain
        await pilot.press("escape")
        drawn = charts.text
        await pilot.pause(4.5)  # past two 2 s redraws: none while the dashboard is shown
        assert charts.text is drawn


async def test_offline_and_back_is_shown(sshd_instance, tmp_path: Path) -> None:
    app = make_app(tmp_path, [sshd_instance])
    async with app.run_test(size=(80, 24)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        sshd_instance.stop()
        await wait_for(pilot, lambda: state_of(app, name) == "offline")
        await wait_for(pilot, lambda: "offline" in panel_text(app))
        assert app.dashboard.check_action("reconnect", ()) is True
        sshd_instance.start()
        await pilot.press("R")
        await wait_for(pilot, lambda: state_of(app, name) == "online")


async def test_unknown_host_key_asks_then_trusts(sshd_instance, tmp_path: Path) -> None:
    app = make_app(tmp_path, [sshd_instance], trust=False)
    async with app.run_test(size=(80, 24)) as pilot:
        name = sshd_instance.name
        await wait_for(pilot, lambda: state_of(app, name) == "unknown host key")
        assert sshd_instance.host_key_fingerprint in (app.fleet.views[name].fingerprint or "")
        await pilot.press("K")
        assert isinstance(app.screen, TrustKeyScreen)
        await pilot.click("#trust")
        await wait_for(pilot, lambda: state_of(app, name) == "online")
        known = (tmp_path / "data" / "known_hosts").read_text()
        assert sshd_instance.host_public_key.split()[1] in known


async def test_changed_host_key_is_shown_and_trust_key_disabled_elsewhere(sshd_fleet, tmp_path: Path) -> None:
    changed = sshd_fleet[1]
    app = make_app(tmp_path, sshd_fleet)
    changed.regenerate_host_key()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: state_of(app, changed.name) == "host key changed")
        assert app.dashboard.check_action("trust_key", ()) is None  # first instance is fine: shown disabled
        await pilot.press("j")
        assert app.dashboard.check_action("trust_key", ()) is True
        await pilot.press("K")
        assert isinstance(app.screen, TrustKeyScreen)
        await pilot.press("escape")  # refusing keeps it refused
        await pilot.pause(0.5)
        assert state_of(app, changed.name) == "host key changed"


async def test_welcome_screen_when_no_instances(tmp_path: Path) -> None:
    settings = parse_settings("")
    paths = Paths(tmp_path / "config.toml", tmp_path / "data", tmp_path / "log", tmp_path / "x", tmp_path / "y")
    app = build_app(config_source(settings, paths, SecretStore(environ={})), settings)
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(app.screen, WelcomeScreen)
        await pilot.press("d")
    assert app.return_value == "demo"


async def test_auth_failed_asks_for_the_password_in_a_modal(sshd_instance, password_user, tmp_path: Path) -> None:
    inst = sshd_instance
    text = (
        "[settings]\nconnect_timeout_seconds = 2.0\nrefresh_seconds = 0.5\n[[instances]]\n"
        f'name = "{inst.name}"\nhost = "{inst.host}"\nport = {inst.port}\nuser = "{password_user.name}"\n'
    )
    settings = parse_settings(text)
    paths = Paths(tmp_path / "config.toml", tmp_path / "data", tmp_path / "log", tmp_path / "x", tmp_path / "y")
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    paths.app_known_hosts.write_text(inst.host_public_key_line + "\n")
    app = build_app(config_source(settings, paths, SecretStore(environ={})), settings)
    async with app.run_test(size=(80, 24)) as pilot:
        name = inst.name
        await wait_for(pilot, lambda: state_of(app, name) == "auth failed")
        assert "press R to type the password" in panel_text(app)
        await pilot.press("R")
        assert isinstance(app.screen, PasswordScreen)
        await pilot.press("escape")  # cancel: nothing changes
        assert not isinstance(app.screen, PasswordScreen)
        assert state_of(app, name) == "auth failed"
        assert "(keys)" in (app.fleet.views[name].message or "")

        await pilot.press("R")
        wrong = "wrong-" + password_user.password
        await pilot.press(*wrong, "enter")
        # the retry used the typed (wrong) password: refused again, now saying so
        await wait_for(pilot, lambda: "(password)" in (app.fleet.views[name].message or ""))
        assert state_of(app, name) == "auth failed"

        await pilot.press("R")
        assert isinstance(app.screen, PasswordScreen)
        await pilot.press(*password_user.password)
        svg = app.export_screenshot()
        assert password_user.password not in svg and "•" in svg  # masked on screen
        await pilot.press("enter")
        await wait_for(pilot, lambda: state_of(app, name) in ("online", "gpu error"))


def palette_offers(app, title: str) -> bool:
    """The command palette shows its results with `title` highlighted: enter runs it."""
    found = app.screen.query(CommandList)
    if not found or not found.first().has_class("--visible"):
        return False
    results = found.first()
    return results.highlighted is not None and title in str(results.get_option_at_index(results.highlighted).prompt)


async def test_command_palette_lists_the_possible_actions(inproc_fleet, tmp_path: Path) -> None:
    fleet = await inproc_fleet()
    app = inproc_app(tmp_path, fleet)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "gpu") == "online")
        titles = [c.title for c in app.get_system_commands(app.screen)]
        assert "Detail" in titles and "Help" in titles
        assert "Trust key" not in titles and "Reconnect" not in titles  # not possible while online
        await pilot.press("ctrl+p")
        await pilot.press(*"Detail")
        await wait_for(pilot, lambda: palette_offers(app, "Detail"))  # the search runs in a worker
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
