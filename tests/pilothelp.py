"""Build the dashboard for Pilot tests, and read what it shows (shared by tests/ui/).

Two kinds of hosts:

- real OpenSSH sshd instances (tests/sshd.py; root): ``make_app(tmp, instances)``. For what is
  about SSH itself: logins, host keys, a killed sshd, real files and processes on the instance.
- in-process SSH servers (gpu_tui.demo's simulation on loopback; no root, no sshd):
  ``inproc_app(tmp, fleet)`` on a fleet from the ``inproc_fleet`` fixture (tests/conftest.py),
  optionally of ``steady`` instances whose GPUs read a fixed utilisation. A config-file dashboard
  like a user's (add, edit, the q guard, the ledger), unlike ``demo_source``'s demo mode.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from textual.widgets import Static

from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore, env_var_name
from gpu_tui.config.settings import parse_settings
from gpu_tui.demo import DemoFleet
from gpu_tui.demo.profiles import RTX_4090, Profile, Workload
from gpu_tui.ui.app import GpuTuiApp
from gpu_tui.ui.factory import build_app, config_source
from gpu_tui.ui.widgets import GpuPanel

T = TypeVar("T")

__all__ = ["inproc_app", "inproc_config", "make_app", "on_top", "panel_text", "screen_text", "state_of", "steady"]


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

    # a fresh handshake with a real sshd can take seconds when the machine is busy (the suite
    # runs two workers per core); a stopped sshd refuses at once, so the wait costs nothing there
    text = config_text(instances, connect_timeout=5.0) + keys
    if write_config:
        (tmp / "config.toml").write_text(text)
    settings = parse_settings(text)
    paths = _paths(tmp)
    if trust:
        paths.app_known_hosts.write_text("".join(f"{i.host_public_key_line}\n" for i in instances))
    return build_app(config_source(settings, paths, SecretStore(environ={})), settings)


def steady(name: str, util: float, *, gpus: int = 1, rate: float = 1.5) -> Profile:
    """An in-process instance whose `gpus` RTX 4090s all read `util` % every tick, with no jobs."""
    return Profile(
        name=name,
        provider="generic",
        hourly_rate=rate,
        gpu=RTX_4090,
        workloads=tuple(Workload(level=util, memory_mib=1024.0) for _ in range(gpus)),
    )


def inproc_config(fleet: DemoFleet, *, settings: str = "", extra: str = "", keys: str = "") -> str:
    """A config file for `fleet`'s instances (user root; no password in it): `settings` adds
    lines to [settings], `extra` to each instance, `keys` to the end (the last instance, or a
    table of its own such as [keys]), as make_app's `keys` does."""
    parts = [f"[settings]\nconnect_timeout_seconds = 5.0\nrefresh_seconds = 0.5\n{settings}"]
    for inst in fleet.settings.instances:
        parts.append(
            "[[instances]]\n"
            f'name = "{inst.name}"\nhost = "{inst.host}"\nport = {inst.port}\nuser = "root"\n'
            f"hourly_rate = {inst.hourly_rate}\n{extra}"
        )
    return "\n".join(parts) + keys


def inproc_app(
    tmp: Path,
    fleet: DemoFleet,
    *,
    settings: str = "",
    extra: str = "",
    keys: str = "",
    write_config: bool = True,
    clock: Callable[[], float] = time.time,
) -> GpuTuiApp:
    """A config-file dashboard on `fleet`'s in-process servers: their host keys trusted, their
    passwords in GPU_TUI_PASSWORD_<NAME> (a SecretStore of its own, not os.environ)."""
    text = inproc_config(fleet, settings=settings, extra=extra, keys=keys)
    if write_config:
        (tmp / "config.toml").write_text(text)
    parsed = parse_settings(text)
    paths = _paths(tmp)
    paths.app_known_hosts.write_text(fleet.known_hosts_text)
    store = SecretStore(environ={env_var_name(n): pw for n, pw in fleet.passwords.items()})
    return build_app(config_source(parsed, paths, store), parsed, clock=clock)


def state_of(app: GpuTuiApp, name: str) -> str:
    assert app.fleet is not None
    return app.fleet.views[name].shown_state


def panel_text(app: GpuTuiApp) -> str:
    return app.query_one(GpuPanel).render_view(app.dashboard.selected(), time.time()).plain


def on_top(app: Any, cls: type[T]) -> T | None:
    """The screen on top if it is a `cls` and has composed, else None: wait on this, not on
    isinstance. A screen pushed from a worker (the shutdown report, a host-key question after a
    login) is on top a moment before its widgets are there to read or click."""
    screen = app.screen
    return screen if isinstance(screen, cls) and screen.is_mounted else None


def screen_text(screen: Any) -> str:
    """Every Static's text on `screen` (empty until the screen has composed: wait for the text)."""
    return "\n".join(str(s.render()) for s in screen.query(Static))
