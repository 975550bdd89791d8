"""Build the dashboard for Pilot tests, and read what it shows (shared by tests/ui/).

``make_app(tmp, instances)``: the dashboard on real OpenSSH sshd instances (tests/sshd.py; root).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from textual.widgets import Static

from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import parse_settings
from gpu_tui.ui.app import GpuTuiApp
from gpu_tui.ui.factory import build_app, config_source
from gpu_tui.ui.widgets import GpuPanel

__all__ = ["make_app", "panel_text", "screen_text", "state_of"]


def _paths(tmp: Path) -> Paths:
    paths = Paths(tmp / "config.toml", tmp / "data", tmp / "log", tmp / "no-ssh-config", tmp / "no-known-hosts")
    paths.data_dir.mkdir(parents=True, exist_ok=True)
    return paths


def make_app(
    tmp: Path, instances: list, *, trust: bool = True, keys: str = "", write_config: bool = False
) -> GpuTuiApp:
    """The dashboard on sshd `instances`; `write_config` also writes the config file, for the
    children that read it (rsync's transport, the shell)."""
    from sshhelp import config_text

    text = config_text(instances, connect_timeout=2.0) + keys
    if write_config:
        (tmp / "config.toml").write_text(text)
    settings = parse_settings(text)
    paths = _paths(tmp)
    if trust:
        paths.app_known_hosts.write_text("".join(f"{i.host_public_key_line}\n" for i in instances))
    return build_app(config_source(settings, paths, SecretStore(environ={})), settings)


def state_of(app: GpuTuiApp, name: str) -> str:
    assert app.fleet is not None
    return app.fleet.views[name].shown_state


def panel_text(app: GpuTuiApp) -> str:
    return app.query_one(GpuPanel).render_view(app.dashboard.selected(), time.time()).plain


def screen_text(screen: Any) -> str:
    """Every Static's text on `screen` (empty until the screen has composed: wait for the text)."""
    return "\n".join(str(s.render()) for s in screen.query(Static))
