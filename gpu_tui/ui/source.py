"""Where the dashboard's instances come from: the config file, the demo fleet, or this machine."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import SecretStr

from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.providers import AccountBalance
from gpu_tui.remote.host import Host
from gpu_tui.services.billing import Billing
from gpu_tui.services.fleet import Lab
from gpu_tui.services.jobs.series.cache import SeriesCache
from gpu_tui.services.notify.targets import NotifySetup
from gpu_tui.services.onboard import Onboarder
from gpu_tui.services.providers import ProviderClient
from gpu_tui.services.providers.autodl_balance import Balance

__all__ = ["FleetSource", "Opened"]


@dataclass
class Opened:
    """What a source yields once started: the instances and hosts, and how to trust a host key."""

    settings: Settings
    hosts: Sequence[tuple[InstanceConfig, Host]]
    trust: Callable[[str, str], None] = lambda name, key_line: None
    close: Callable[[], Awaitable[None]] | None = None
    use_password: Callable[[str, SecretStr], None] | None = None
    """Use a typed password for this session (memory only); None where passwords mean nothing."""
    save_password: Callable[[str, SecretStr], None] | None = None
    """Store a password in the keyring; blocking (run it in a thread); raises SecretError."""
    onboarder: Onboarder | None = None
    """Adds instances to the config file (`a`); None for the demo and this machine."""
    billing: Billing | None = None
    """The cost ledger, told of every sighting, power-on and verified shutdown; None for the demo
    (it would bill the user's real ledger for simulated machines) and this machine."""
    balance: Callable[[], Awaitable[Balance]] | None = None
    """Fetch the AutoDL account balance (a developer token is stored); None otherwise."""
    providers: Mapping[str, ProviderClient] = field(default_factory=dict)
    """API clients of the providers whose token is stored and that have imported instances
    (`p` powers those on); empty otherwise."""
    balances: Sequence[Callable[[], Awaitable[AccountBalance]]] = ()
    """Fetch the RunPod / Vast.ai balances for the fleet bar (AutoDL's is `balance`)."""
    typed_password: Callable[[str], SecretStr | None] = lambda name: None
    """A password typed in this session, for child processes (rsync's transport, the shell)."""
    notify: Callable[[], NotifySetup] | None = None
    """The notification targets (config + keyring; blocking: run it in a thread); None for the
    demo and this machine, which send nothing."""
    ship_notify: Callable[[Host, InstanceConfig], Awaitable[list[str]]] | None = None
    """Put the notification targets on an instance (before a job starts there), so it reports
    the job's end itself; None for the demo and this machine."""
    series_cache: SeriesCache | None = None
    """Copies of jobs' series files (shared with `gpu-tui metrics`): a log screen opened again
    fetches only what the instance appended; None for the demo and this machine."""
    make_host: Callable[[InstanceConfig], Host] | None = None
    """A fresh, unconnected host for an instance (shutdown verifies with one); None where
    gpu-tui does not power instances off (this machine, the demo)."""
    labs: Sequence[Lab] = ()
    """The config's `[prometheus.NAME]` sources: each lab's nodes are rows too (numbers only)."""


@dataclass
class FleetSource:
    """A named, lazily opened source; opening runs on the app's event loop (the demo starts servers)."""

    title: str
    open: Callable[[], Awaitable[Opened]]
    config_path: str = ""
    empty: bool = field(default=False)
    """True when the config has no instances and no Prometheus: the app shows the welcome screen instead."""
    remote: bool = True
    """False for this machine: no SSH, so trust-key and reconnect are hidden rather than disabled."""
    importable: tuple[str, ...] = ()
    """Providers whose API token is stored (the welcome screen offers their import)."""
    import_all: Callable[[], Awaitable[str]] | None = None
    """Import every instance of those accounts into the config; what was done, in a line."""
    show_address: bool = True
    """False for the demo, whose loopback ports mean nothing to a user (and change every run)."""
