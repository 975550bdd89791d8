"""Reach the demo fleet's in-process SSH servers through gpu-tui's own SshHost (shared by tests)."""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr

from gpu_tui.demo import DemoFleet
from gpu_tui.remote.hostkeys import KnownHosts
from gpu_tui.remote.ssh import SshHost, SshTarget


def demo_known_hosts(tmp_path: Path, text: str) -> KnownHosts:
    """A user file that does not exist and an app file holding `text`, as the app would write it."""
    app_file = tmp_path / "app_known_hosts"
    app_file.write_text(text, encoding="utf-8")
    return KnownHosts(tmp_path / "user_known_hosts", app_file)


def demo_ssh_host(fleet: DemoFleet, name: str, kh: KnownHosts, *, password: str | None = None) -> SshHost:
    inst = fleet.settings.instance(name)
    return SshHost(
        SshTarget(inst.name, inst.host, inst.port, inst.user),
        known_hosts=kh,
        password=SecretStr(password if password is not None else fleet.passwords[name]),
        connect_timeout=5.0,
    )
