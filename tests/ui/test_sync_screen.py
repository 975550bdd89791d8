"""The sync screen (`y`), driven with Pilot in a tiny app against a real sshd: push, pull,
cancel, and an 80x24 layout."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sshhelp import ssh_host
from textual.app import App
from textual.widgets import Static
from waiting import wait_for

from gpu_tui.config.settings import InstanceConfig, SyncConfig
from gpu_tui.ui.screens.sync import SyncScreen

pytestmark = pytest.mark.sshd


class SyncApp(App[None]):
    def __init__(self, screen: SyncScreen) -> None:
        super().__init__()
        self._sync_screen = screen

    def on_mount(self) -> None:
        self.push_screen(self._sync_screen)


def text_of(screen: SyncScreen, wid: str) -> str:
    return str(screen.query_one(wid, Static).render())


def transports(config: str) -> list[int]:
    """pids of rsync transports (`gpu-tui --config CONFIG _transport`) of this test's config."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"_transport" in argv and config.encode() in argv:
                pids.append(int(entry))
    return pids


@pytest.fixture
def setup(sshd_instance, tmp_path: Path, monkeypatch):
    """(instance config, connected-host factory, config path, local dir) with the transport's
    environment (trusted host key, no keyring) in place for the rsync child."""
    local = tmp_path / "proj"
    local.mkdir()
    inst = InstanceConfig(
        name=sshd_instance.name,
        host=sshd_instance.host,
        port=sshd_instance.port,
        identity_file=str(sshd_instance.client_key_path),
        sync=SyncConfig(local=str(local), remote="proj", exclude=("*.ckpt",)),
    )
    cfg = tmp_path / "config.toml"
    cfg.write_text(
        f'[[instances]]\nname = "{inst.name}"\nhost = "{inst.host}"\nport = {inst.port}\n'
        f'identity_file = "{inst.identity_file}"\n'
    )
    data = tmp_path / "xdg-data"
    (data / "gpu-tui").mkdir(parents=True)
    (data / "gpu-tui" / "known_hosts").write_text(sshd_instance.host_public_key_line + "\n")
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    return inst, lambda: ssh_host(sshd_instance, tmp_path), str(cfg), local


async def test_push_then_pull_in_80x24(setup, sshd_instance) -> None:
    inst, make_host, cfg, local = setup
    (local / "train.py").write_text("print('hi')\n")
    (local / "[red]markup[red].txt").write_text("a name that looks like markup\n")
    (local / "model.ckpt").write_text("excluded\n")
    host = make_host()
    await host.connect()
    screen = SyncScreen(inst, host, config_path=cfg)
    try:
        async with SyncApp(screen).run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: "REMOTE" in text_of(screen, "#paths"))
            paths = text_of(screen, "#paths")
            assert str(local) in paths and f"{inst.name}:{sshd_instance.home()}/proj" in paths
            assert "*.ckpt" in paths
            await pilot.press("p")
            await wait_for(pilot, lambda: screen.summary is not None or screen.error is not None)
            assert screen.error is None
            assert screen.summary is not None and screen.summary.method == "rsync" and screen.summary.files_sent == 2
            assert text_of(screen, "#status").startswith("pushed ")
            remote = sshd_instance.home() / "proj"
            assert sorted(p.name for p in remote.iterdir()) == ["[red]markup[red].txt", "train.py"]

            (local / "train.py").unlink()
            await pilot.press("l")
            await wait_for(
                pilot,
                lambda: screen.running is None and screen.summary is not None and screen.summary.direction == "pull",
            )
            assert (local / "train.py").read_text() == "print('hi')\n"
            await pilot.press("escape")
            await pilot.pause()
            assert pilot.app.screen is not screen
    finally:
        await host.close()


async def test_escape_cancels_a_running_sync(setup, sshd_instance) -> None:
    inst, make_host, cfg, local = setup
    (local / "big.bin").write_bytes(os.urandom(24 * 1024 * 1024))
    host = make_host()
    await host.connect()
    screen = SyncScreen(inst, host, config_path=cfg, bwlimit_kib=4000)
    try:
        async with SyncApp(screen).run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: "REMOTE" in text_of(screen, "#paths"))
            await pilot.press("p")
            await wait_for(pilot, lambda: "big.bin" in text_of(screen, "#current"))
            assert screen.running == "push"
            await pilot.press("escape")
            await wait_for(pilot, lambda: screen.running is None)
            assert "cancelled" in text_of(screen, "#status")
            assert pilot.app.screen is screen  # the first escape cancels, it does not leave
            await wait_for(pilot, lambda: not transports(cfg), what="the rsync transport to end")
            assert not (sshd_instance.home() / "proj" / "big.bin").exists()
    finally:
        await host.close()


async def test_sftp_when_there_is_no_config_and_errors_are_shown(setup, sshd_instance, tmp_path: Path) -> None:
    inst, make_host, _, local = setup
    (local / "a.txt").write_text("a")
    host = make_host()
    await host.connect()
    screen = SyncScreen(inst, host)  # no config file: the demo's case, SFTP only
    try:
        async with SyncApp(screen).run_test(size=(80, 24)) as pilot:
            await wait_for(pilot, lambda: "REMOTE" in text_of(screen, "#paths"))
            await pilot.press("p")
            await wait_for(pilot, lambda: screen.summary is not None or screen.error is not None)
            assert screen.summary is not None and screen.summary.method == "sftp"
            assert (sshd_instance.home() / "proj" / "a.txt").read_text() == "a"
            # a pull whose REMOTE is gone is refused with one line in red, the screen stays usable
            screen._inst = inst.model_copy(update={"sync": SyncConfig(local=str(local), remote="gone")})
            await pilot.press("l")
            await wait_for(pilot, lambda: screen.error is not None)
            assert "gone is not a directory" in text_of(screen, "#status")
    finally:
        await host.close()
