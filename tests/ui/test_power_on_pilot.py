"""`p` powers a stopped imported instance on through its provider's API, and the fleet bar
shows the provider's balance: Pilot, a loopback RunPod API (tests/providerservers.py) and a
real sshd that the API's start brings up."""

from __future__ import annotations

from pathlib import Path

from pilothelp import _paths, state_of
from providerservers import ProviderServer, provider_env
from waiting import wait_for

from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import parse_settings
from gpu_tui.ui.factory import build_app, config_source


async def test_p_powers_the_stopped_instance_on(sshd_factory, tmp_path: Path, monkeypatch) -> None:
    box = sshd_factory("pod-p")
    box.stop()
    srv = ProviderServer("runpod", token="rp-key").start()
    try:
        srv.add("podppp", name="p", state="stopped", ssh=(box.host, box.port), on_start=box.start, boot_polls=1)
        env = provider_env(srv)
        for key in ("GPU_TUI_RUNPOD_API", "GPU_TUI_RUNPOD_GRAPHQL"):
            monkeypatch.setenv(key, env[key])
        text = (
            f'[settings]\nconnect_timeout_seconds = 2.0\nrefresh_seconds = 0.5\n\n[[instances]]\nname = "pod"\n'
            f'host = "{box.host}"\nport = {box.port}\nprovider = "runpod"\nprovider_id = "podppp"\n'
            f'hourly_rate = 0.69\nidentity_file = "{box.client_key_path}"\n'
        )
        settings = parse_settings(text)
        paths = _paths(tmp_path)
        paths.app_known_hosts.write_text(f"{box.host_public_key_line}\n")
        secrets = SecretStore(environ={"GPU_TUI_PASSWORD_PROVIDER_RUNPOD": "rp-key"})
        app = build_app(config_source(settings, paths, secrets), settings)
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: state_of(app, "pod") == "offline")
            await wait_for(pilot, lambda: "RunPod $42.50" in str(app.dashboard.fleet_bar.content))
            assert app.dashboard.check_action("power_on", ()) is True
            await pilot.press("p")
            await wait_for(pilot, lambda: state_of(app, "pod") == "online", timeout=60)
            assert srv.instances["podppp"].starts == 1 and box.is_running
            assert app.dashboard.check_action("power_on", ()) is None  # it bills now: nothing to power on
    finally:
        srv.stop()


async def test_no_token_no_key(sshd_factory, tmp_path: Path) -> None:
    box = sshd_factory("pod-q")
    text = (
        f'[[instances]]\nname = "pod"\nhost = "{box.host}"\nport = {box.port}\nprovider = "runpod"\n'
        f'provider_id = "x"\nidentity_file = "{box.client_key_path}"\n'
    )
    settings = parse_settings(text)
    app = build_app(config_source(settings, _paths(tmp_path), SecretStore(environ={})), settings)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.dashboard.check_action("power_on", ()) is False


async def test_welcome_offers_import_when_a_token_is_stored(tmp_path: Path, monkeypatch) -> None:
    from gpu_tui.config.settings import Settings, load_settings
    from gpu_tui.ui.screens import WelcomeScreen

    srv = ProviderServer("vast", token="vk").start()
    try:
        srv.add("77", name="big", state="stopped", ssh=("127.0.0.1", 2200), price=1.2)
        monkeypatch.setenv("GPU_TUI_VAST_API", srv.url)
        paths = _paths(tmp_path)
        secrets = SecretStore(environ={"GPU_TUI_PASSWORD_PROVIDER_VAST": "vk"})
        app = build_app(config_source(Settings(), paths, secrets), Settings())
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, WelcomeScreen))
            assert app.screen.check_action("choose", ("import",)) is True
            await pilot.press("i")
            await wait_for(pilot, lambda: not app.is_running)
        assert app.return_value == "config"
        inst = load_settings(paths.config_file).instance("vast-big")
        assert (inst.provider, inst.provider_id, inst.hourly_rate, inst.currency) == ("vast", "77", 1.2, "$")
    finally:
        srv.stop()
    # without a token the offer is not there
    app = build_app(config_source(Settings(), _paths(tmp_path / "b"), SecretStore(environ={})), Settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, WelcomeScreen))
        assert app.screen.check_action("choose", ("import",)) is False
