"""Adding and reaching instances: the add form (`a`), the edit form (`i`), the password prompt
(`R` after `auth failed`), the trust-key prompt (`K`) and the welcome screen (nothing
configured yet).

The demo offers none of them, and what they print (a login, a host key) would change every run
for the demo's loopback servers: each is shown with fixed inputs (shots.EXAMPLE, an AutoDL login).
"""

from __future__ import annotations

from pathlib import Path

from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.services.onboard import Onboarder
from gpu_tui.ui.app import GpuTuiApp
from gpu_tui.ui.screens import PasswordScreen, TrustKeyScreen
from gpu_tui.ui.screens.add import AddInstanceScreen
from gpu_tui.ui.screens.edit import EditInstanceScreen
from gpu_tui.ui.source import FleetSource, Opened

from .shots import EXAMPLE, HOST, LOGIN, PORT, SIZES, HostApp, fixed_clock

FINGERPRINT = "SHA256:q3N1bXJ2Yy1mYWtlLWtleS1mb3Itc25hcHNob3RzLTAw"
"""A made-up fingerprint in SHA256 form (a real host key's would change every run)."""


def _onboarder(tmp_path: Path) -> Onboarder:
    """What the add form writes to: a config and data dir under tmp_path (the form prints neither)."""
    paths = Paths(
        config_file=tmp_path / "config.toml",
        data_dir=tmp_path / "data",
        log_dir=tmp_path / "log",
        ssh_config=tmp_path / "no-ssh-config",
        user_known_hosts=tmp_path / "no-known-hosts",
    )
    return Onboarder(Settings(), paths, SecretStore(environ={}))


@SIZES
def test_add_form(snap_compare, size, tmp_path) -> None:
    """`a`: paste the login; password, price, name and provider; keyring and key options."""
    onboarder = _onboarder(tmp_path)
    assert snap_compare(HostApp(lambda: AddInstanceScreen(onboarder)), terminal_size=size)


def test_add_form_refusal(snap_compare, tmp_path) -> None:
    """A login the form cannot read stays in the form as one line; nothing is written."""
    onboarder = _onboarder(tmp_path)

    async def type_login(pilot) -> None:
        await pilot.press(*"ssh -p root@")
        await pilot.press("enter")

    assert snap_compare(HostApp(lambda: AddInstanceScreen(onboarder)), terminal_size=(80, 24), run_before=type_login)


@SIZES
def test_edit_form(snap_compare, size) -> None:
    """`i`: price, provider, directories, shutdown and sync of one config entry."""

    def save(_name: str, _fields: dict[str, object]) -> InstanceConfig:
        raise AssertionError("the snapshot saves nothing")

    assert snap_compare(HostApp(lambda: EditInstanceScreen(EXAMPLE, save)), terminal_size=size)


@SIZES
def test_password_prompt(snap_compare, size) -> None:
    """`R` on an `auth failed` instance: the refusal, a masked input, keep it in the keyring or not."""
    reason = f"{LOGIN} refused the login (password); check the user and credentials"
    screen = lambda: PasswordScreen(EXAMPLE.name, LOGIN, reason, can_save=True)  # noqa: E731
    assert snap_compare(HostApp(screen), terminal_size=size)


@SIZES
def test_trust_key_prompt(snap_compare, size) -> None:
    """`K` on `unknown host key`: the fingerprint, to compare with the provider's console."""
    screen = lambda: TrustKeyScreen(EXAMPLE.name, f"{HOST}:{PORT}", FINGERPRINT, False)  # noqa: E731
    assert snap_compare(HostApp(screen), terminal_size=size)


@SIZES
def test_trust_changed_key_prompt(snap_compare, size) -> None:
    """`K` on `host key changed`: the loud warning."""
    screen = lambda: TrustKeyScreen(EXAMPLE.name, f"{HOST}:{PORT}", FINGERPRINT, True)  # noqa: E731
    assert snap_compare(HostApp(screen), terminal_size=size)


@SIZES
def test_welcome(snap_compare, size) -> None:
    """`gpu-tui` with nothing configured: add one, or look at the demo or this machine."""

    async def never() -> Opened:
        raise AssertionError("an empty config opens nothing")

    source = FleetSource(title="", open=never, config_path="/home/me/.config/gpu-tui/config.toml", empty=True)
    assert snap_compare(GpuTuiApp(source, clock=fixed_clock), terminal_size=size)
