"""What the snapshot modules share: the demo fleet on a fixed clock (as is, degraded, or with the
powers a config file's instances have), a host app for screens pushed with fixed inputs, and
waiting for a screen's content without fixed sleeps.

Nothing machine-specific may reach a picture: the demo hides its loopback ports, temp paths
never show (configs and ledgers live in a tmp dir the screens do not print), local times are in
UTC (conftest.py), and the sync directory is a fixed fake path.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from rich.text import Text
from textual.app import App
from textual.css.query import NoMatches, WrongType
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Static

from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, SyncConfig
from gpu_tui.services.billing import Billing
from gpu_tui.services.hosts import build_ssh_host, known_hosts_for
from gpu_tui.services.onboard import Onboarder
from gpu_tui.ui.app import GpuTuiApp
from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.source import FleetSource, Opened
from gpu_tui.ui.still import settle

__all__ = [
    "EXAMPLE",
    "FIXED_CLOCK",
    "HOST",
    "LOGIN",
    "PORT",
    "SIZES",
    "TRAIN",
    "HostApp",
    "configured_demo_app",
    "degraded_demo_app",
    "demo_app",
    "fixed_clock",
    "online",
    "settled",
    "steps",
    "text_of",
    "until",
    "wait_for",
]

FIXED_CLOCK = 1_796_000_000.0
"""2026-11-30 00:53:20 UTC, a Monday: cost, uptime, ETAs and dates read the same every run."""

SIZES = pytest.mark.parametrize("size", [(80, 24), (120, 36)], ids=["80x24", "120x36"])
"""Every screen at the smallest terminal gpu-tui supports and at a wide one."""

TRAIN = "autodl-4090-train"
"""The demo's first row (selected at start): the instance with a training job running."""

SYNC_LOCAL = "/home/me/projects/resnet50"
"""A fixed fake LOCAL for the training instance's sync (the default would be the cwd)."""

HOST, PORT = "connect.westb.seetacloud.com", 23456
LOGIN = f"root@{HOST}:{PORT}"
EXAMPLE = InstanceConfig(
    name="autodl-westb-23456",
    host=HOST,
    port=PORT,
    user="root",
    hourly_rate=1.98,
    provider="autodl",
    workdir="/root/autodl-tmp",
    sync=SyncConfig(local=SYNC_LOCAL, remote="/root/autodl-tmp/resnet50", exclude=(".git", "__pycache__", "*.ckpt")),
)
"""A config entry with fixed inputs (an example AutoDL login, as the README's), for the screens
that print what the demo's loopback servers would change every run."""


def fixed_clock() -> float:
    return FIXED_CLOCK


def demo_app() -> GpuTuiApp:
    """`gpu-tui demo`: seed 0, the fixed clock."""
    return build_app(demo_source(seed=0, clock=fixed_clock), clock=fixed_clock)


def _tweaked_source(
    *,
    wrong_password: Iterable[str] = (),
    unknown_key: Iterable[str] = (),
    configured: bool = False,
) -> FleetSource:
    """The demo fleet as demo_source opens it, with some instances broken on purpose, or with
    what a config file's instances have (`configured`: add, edit, sync, cost, shutdown, the quit
    guard), its config and ledger in a temp dir that no screen prints."""
    wrong, unknown = set(wrong_password), set(unknown_key)

    async def open_() -> Opened:
        from gpu_tui.demo import start_demo_fleet

        workdir = Path(tempfile.mkdtemp(prefix="gpu-tui-snap-"))
        fleet = await start_demo_fleet(None, workdir=workdir, seed=0, clock=fixed_clock)
        settings = fleet.settings
        if configured:
            sync = SyncConfig(local=SYNC_LOCAL, exclude=(".git", "__pycache__", "*.ckpt"))
            instances = tuple(
                inst.model_copy(update={"sync": sync}) if inst.name == TRAIN else inst for inst in settings.instances
            )
            settings = settings.model_copy(update={"instances": instances})
        paths = Paths(
            config_file=workdir / "config.toml",
            data_dir=workdir / "data",
            log_dir=workdir / "log",
            ssh_config=workdir / "no-ssh-config",
            user_known_hosts=workdir / "no-known-hosts",
        )
        paths.data_dir.mkdir(parents=True, exist_ok=True)
        unknown_ports = {f"]:{settings.instance(n).port} " for n in unknown}
        known = [ln for ln in fleet.known_hosts_text.splitlines() if not any(p in ln for p in unknown_ports)]
        paths.app_known_hosts.write_text("".join(ln + "\n" for ln in known), encoding="utf-8")
        store = SecretStore(environ={})
        for name, pw in fleet.passwords.items():
            store.remember(name, SecretStr("not-the-password" if name in wrong else pw))
        hosts = [(inst, build_ssh_host(inst, settings, paths, store)) for inst in settings.instances]
        host_of = {inst.name: host for inst, host in hosts}
        billing = Billing(paths.ledger_file) if configured else None

        def use_password(name: str, password: SecretStr) -> None:
            store.remember(name, password)
            host_of[name].set_password(password)

        def trust(name: str, key_line: str) -> None:
            inst = settings.instance(name)
            known_hosts_for(paths).trust(inst.host, inst.port, key_line)

        async def close() -> None:
            if billing is not None:
                billing.close()
            await fleet.close()
            shutil.rmtree(workdir, ignore_errors=True)

        return Opened(
            settings,
            hosts,
            trust,
            close=close,
            use_password=use_password,
            onboarder=Onboarder(settings, paths, store) if configured else None,
            billing=billing,
            make_host=(lambda inst: build_ssh_host(inst, settings, paths, store)) if configured else None,
        )

    # title "": the default config, whose path the top bar leaves out; show_address False: the
    # instances are still loopback servers whose ports change every run
    return FleetSource(
        title="" if configured else "demo",
        open=open_,
        config_path="/nonexistent/config.toml" if configured else "",
        show_address=False,
    )


def degraded_demo_app(*, wrong_password: Iterable[str] = (), unknown_key: Iterable[str] = ()) -> GpuTuiApp:
    return build_app(_tweaked_source(wrong_password=wrong_password, unknown_key=unknown_key), clock=fixed_clock)


def configured_demo_app() -> GpuTuiApp:
    """The demo fleet as if it came from a config file: every dashboard key is live."""
    return build_app(_tweaked_source(configured=True), clock=fixed_clock)


class HostApp(App[None]):
    """Shows one screen built with fixed inputs, for screens the demo does not offer."""

    TITLE = "gpu-tui"  # the picture's title bar, as for the real app

    def __init__(self, make: Callable[[], Screen[Any]]) -> None:
        super().__init__()
        self._make = make

    def on_mount(self) -> None:
        self.push_screen(self._make())


# ----- waiting
def _ready(check: Callable[[], bool]) -> bool:
    try:
        return bool(check())
    except (NoMatches, WrongType):  # the screen is not up yet
        return False


async def until(
    pilot: Pilot[Any],
    check: Callable[[], bool],
    what: str,
    timeout: float = 20.0,
    explain: Callable[[], str] | None = None,
) -> None:
    """Poll `check` (a screen's widget text, a loaded list) until it holds; no fixed sleeps.
    `explain`: what the screen showed, said in the error when it never held."""
    end = time.monotonic() + timeout
    while not _ready(check):
        if time.monotonic() > end:
            seen = f"; {explain()}" if explain is not None else ""
            raise TimeoutError(f"waited {timeout:.0f} s for {what}{seen}")
        await pilot.pause(0.05)


def text_of(static: Static) -> str:
    content = static.content
    return content.plain if isinstance(content, Text) else str(content)


def online(name: str = TRAIN, *, jobs: bool = True) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """Wait until instance `name` is online (and its jobs listed): the screens that ask it can open."""

    async def wait(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, GpuTuiApp)

        def up() -> bool:
            view = app.fleet.views[name] if app.fleet is not None else None
            return view is not None and view.state == "online" and (view.jobs_listed or not jobs)

        await until(pilot, up, f"{name} online")

    return wait


async def settled(pilot: Pilot[Any]) -> None:
    """Freeze the dashboard (gpu_tui.ui.still.settle): every worker stops, the histories fill."""
    await settle(pilot.app)


def steps(*parts: Callable[[Pilot[Any]], Awaitable[None]] | str | list[str]) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A run_before of several steps: coroutines on the pilot, or keys (a str or a list) to press."""

    async def run(pilot: Pilot[Any]) -> None:
        for part in parts:
            if isinstance(part, str):
                await pilot.press(part)
            elif isinstance(part, list):
                await pilot.press(*part)
            else:
                await part(pilot)

    return run


def wait_for(
    check: Callable[[App[Any]], bool],
    what: str,
    *,
    timeout: float = 20.0,
    explain: Callable[[App[Any]], str] | None = None,
) -> Callable[[Pilot[Any]], Awaitable[None]]:
    """A step: wait until `check(app)` holds (`explain(app)`: what was there instead)."""

    async def wait(pilot: Pilot[Any]) -> None:
        said = (lambda: explain(pilot.app)) if explain is not None else None
        await until(pilot, lambda: check(pilot.app), what, timeout, said)

    return wait
