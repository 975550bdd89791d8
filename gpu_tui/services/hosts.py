"""Build a `Host` for each configured instance: credentials, host keys and timeouts in one place."""

from __future__ import annotations

from gpu_tui.config.logsetup import redact
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.remote.hostkeys import KnownHosts
from gpu_tui.remote.ssh import SshHost, SshTarget
from gpu_tui.services.sighting import record_sighting

__all__ = ["build_ssh_host", "known_hosts_for"]


def known_hosts_for(paths: Paths) -> KnownHosts:
    return KnownHosts(paths.user_known_hosts, paths.app_known_hosts)


def build_ssh_host(
    inst: InstanceConfig, settings: Settings, paths: Paths, secrets: SecretStore, *, sighting: bool = False
) -> SshHost:
    """An unconnected SshHost; looks the password up now (keyring calls may take a moment).
    With `sighting`, every connect also records the instance's uptime in the cost ledger
    (subcommands; the dashboard records from its own stats stream)."""
    password = secrets.get_password(inst.name)
    if password is not None:
        redact(password.get_secret_value())
    return SshHost(
        SshTarget(inst.name, inst.host, inst.port, inst.user, inst.identity_file, app_key=paths.app_key),
        known_hosts=known_hosts_for(paths),
        password=password,
        ssh_config=paths.ssh_config,
        connect_timeout=settings.settings.connect_timeout_seconds,
        on_connect=(lambda host: record_sighting(host, inst, paths.ledger_file)) if sighting else None,
    )
