"""The one place that builds the dashboard, for the CLI and for tests alike."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from pydantic import SecretStr

from gpu_tui.config.atomicfile import SECRET_MODE, write_atomic
from gpu_tui.config.language import apply_language, resolve_language
from gpu_tui.config.logsetup import redact
from gpu_tui.config.paths import Paths, default_config_path
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.remote.local import LocalHost
from gpu_tui.services.billing import Billing
from gpu_tui.services.hosts import build_ssh_host, known_hosts_for
from gpu_tui.services.jobs.series.cache import SeriesCache
from gpu_tui.services.monitor.prometheus import lab_source
from gpu_tui.services.notify.ship import ship_configured
from gpu_tui.services.notify.targets import load_setup
from gpu_tui.services.onboard import Onboarder
from gpu_tui.services.providers.autodl_balance import TOKEN_NAME, fetch_balance
from gpu_tui.services.providers.ops import api_clients, import_accounts, importable_providers
from gpu_tui.ui.app import GpuTuiApp
from gpu_tui.ui.source import FleetSource, Opened

__all__ = ["build_app", "config_label", "config_source", "demo_source", "local_source"]


def config_label(path: Path) -> str:
    """How the top bar names the config: nothing for the default file, else the path with `~`."""
    if path.expanduser().resolve() == default_config_path().expanduser().resolve():
        return ""
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if text == home or text.startswith(home + os.sep) else text


def config_source(settings: Settings, paths: Paths, secrets: SecretStore | None = None) -> FleetSource:
    """The instances of the config file, over SSH."""
    store = secrets or SecretStore()
    # keyring look-ups can take a moment: do them now, before the UI owns the terminal
    hosts = [(inst, build_ssh_host(inst, settings, paths, store)) for inst in settings.instances]
    kh = known_hosts_for(paths)
    by_name = {inst.name: inst for inst in settings.instances}

    ssh_hosts = {inst.name: host for inst, host in hosts}

    def trust(name: str, key_line: str) -> None:
        inst = by_name[name]
        kh.trust(inst.host, inst.port, key_line)

    def use_password(name: str, password: SecretStr) -> None:
        redact(password.get_secret_value())
        store.remember(name, password)
        ssh_hosts[name].set_password(password)

    def save_password(name: str, password: SecretStr) -> None:
        store.set_password(name, password)

    # optional: AutoDL's balance, when an AutoDL instance is configured and its token stored
    token = store.get_password(TOKEN_NAME) if any(i.provider == "autodl" for i in settings.instances) else None

    providers = api_clients(settings.instances, store, False)
    timeout = settings.settings.connect_timeout_seconds
    labs = [
        (name, lab, partial(lab_source, name, lab, store, timeout=timeout)) for name, lab in settings.prometheus.items()
    ]

    async def open_() -> Opened:
        return Opened(
            settings,
            list(hosts),
            trust,
            use_password=use_password,
            save_password=save_password,
            balance=(lambda: fetch_balance(token)) if token is not None else None,
            providers=providers,
            balances=[c.balance for p, c in providers.items() if p != "autodl"],
            onboarder=Onboarder(settings, paths, store),
            billing=Billing.for_dashboard(paths.ledger_file),
            make_host=lambda inst: build_ssh_host(inst, settings, paths, store),
            notify=lambda: load_setup(settings, store),
            ship_notify=lambda host, inst: ship_configured(host, inst, settings, store),
            typed_password=store.remembered,
            series_cache=SeriesCache(paths.series_cache),
            labs=labs,
        )

    importable = importable_providers(store) if not settings.instances else ()
    return FleetSource(
        title=config_label(paths.config_file),
        open=open_,
        config_path=str(paths.config_file),
        empty=not settings.instances and not settings.prometheus,
        importable=importable,
        import_all=(lambda: import_accounts(importable, settings, paths, store)) if importable else None,
    )


def demo_source(instances: int | None = None, *, seed: int = 0, clock: Callable[[], float] = time.time) -> FleetSource:
    """The simulated fleet: in-process SSH servers on loopback, reached through the real SSH code."""

    async def open_() -> Opened:
        from gpu_tui.demo import start_demo_fleet

        workdir = Path(tempfile.mkdtemp(prefix="gpu-tui-demo-"))
        fleet = await start_demo_fleet(instances, workdir=workdir, seed=seed, clock=clock)
        paths = Paths(
            config_file=workdir / "config.toml",
            data_dir=workdir / "data",
            log_dir=workdir / "log",
            ssh_config=workdir / "no-ssh-config",
            user_known_hosts=workdir / "no-known-hosts",
        )
        paths.data_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(paths.app_known_hosts, fleet.known_hosts_text, mode=SECRET_MODE)
        store = SecretStore(environ={})
        for name, pw in fleet.passwords.items():
            store.remember(name, SecretStr(pw))
        hosts = [(inst, build_ssh_host(inst, fleet.settings, paths, store)) for inst in fleet.settings.instances]

        async def close() -> None:
            await fleet.close()
            shutil.rmtree(workdir, ignore_errors=True)

        return Opened(fleet.settings, hosts, close=close)

    return FleetSource(title="demo", open=open_, show_address=False)


def local_source(settings: Settings | None = None) -> FleetSource:
    """This machine, without SSH."""
    base = settings or Settings()
    name = "".join(c if c.isalnum() or c in "._-" else "-" for c in socket.gethostname())[:64] or "local"
    inst = InstanceConfig(name=name, host="localhost")
    local_settings = base.model_copy(update={"instances": (inst,)})

    async def open_() -> Opened:
        return Opened(local_settings, [(inst, LocalHost(name))])

    return FleetSource(title="local", open=open_, remote=False)


def build_app(
    source: FleetSource,
    settings: Settings | None = None,
    *,
    clock: Callable[[], float] = time.time,
    language: str | None = None,
) -> GpuTuiApp:
    """The dashboard on `source`, speaking `language` (one of i18n.LANGUAGES: the CLI passes the
    one it resolved from --lang and the rest); without it, GPU_TUI_LANG, then
    settings.language, then the locale decide. The language is applied before the app is
    made: its bindings and the table's header are translated once, when they are built."""
    chosen = language or resolve_language(None, os.environ, settings.settings.language if settings else "auto")
    apply_language(chosen)
    keys = dict(settings.keys) if settings else {}
    return GpuTuiApp(source, keys=keys, clock=clock)
