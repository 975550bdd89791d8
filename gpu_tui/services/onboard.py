"""Adding an instance: from a parsed login command to a tested login and the config entry.

The config is written last, only after the login worked, so a wrong password, an unreachable
host or a changed host key leaves the file as it was. The password goes to the keyring, never
to the config.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from gpu_tui.config.edit import find_instance, upsert_instance
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings, load_settings
from gpu_tui.core.errors import GpuTuiError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.logincmd import LoginSpec, suggest_name
from gpu_tui.remote.ssh import SshHost, SshTarget
from gpu_tui.services.appkey import ensure_app_key, install_public_key
from gpu_tui.services.hosts import build_ssh_host, known_hosts_for

__all__ = [
    "NewInstance",
    "login_host",
    "check_login",
    "install_app_key",
    "save_instance",
    "same_machine",
    "entry_to_update",
    "final_name",
    "Onboarder",
]


@dataclass(frozen=True, slots=True)
class NewInstance:
    """What the user gave for one instance (the password is kept apart, never in here)."""

    name: str
    spec: LoginSpec
    provider: str
    hourly_rate: float | None = None
    """None: keep the entry's rate when updating, 0 for a new one."""

    def fields(self) -> dict[str, Any]:
        """The config keys to write; None values leave an existing entry's key alone."""
        return {
            "name": self.name,
            "host": self.spec.host,
            "port": self.spec.port,
            "user": self.spec.user,
            "provider": self.provider,
            "hourly_rate": self.hourly_rate,
            "identity_file": self.spec.identity_file,
        }


def login_host(new: NewInstance, password: SecretStr | None, paths: Paths, *, connect_timeout: float = 10.0) -> SshHost:
    """An unconnected host for the login test, with the user's and the app's known hosts."""
    s = new.spec
    return SshHost(
        SshTarget(new.name, s.host, s.port, s.user, s.identity_file, app_key=paths.app_key),
        known_hosts=known_hosts_for(paths),
        password=password,
        ssh_config=paths.ssh_config,
        connect_timeout=connect_timeout,
    )


async def check_login(host: SshHost) -> None:
    """Connect and run one command; raise the RemoteError saying why not (HostKeyUnknown first
    time round: the caller asks the user and calls `host.trust_presented_key`)."""
    await host.connect()
    res = await host.run("echo gpu-tui-ok", timeout=15)
    if "gpu-tui-ok" not in res.stdout:
        raise RemoteError(
            _("{name}: logged in, but a command did not run (exit {status}): {error}").format(
                name=host.name, status=res.exit_status, error=res.stderr.strip()[:200]
            )
        )


async def install_app_key(host: SshHost, paths: Paths) -> bool:
    """Install gpu-tui's key (made on first use) on the connected instance; False if it was there."""
    return await install_public_key(host, ensure_app_key(paths.app_key))


def same_machine(paths: Paths, host: str, old_port: int, key_line: str | None) -> bool:
    """Whether the server now answering offers the host key known for `host:old_port`: a
    provider that re-issues an instance on a new port keeps its key, while two machines behind
    one AutoDL region host (same host, same user `root`) have different keys."""
    return bool(key_line) and known_hosts_for(paths).is_known(host, old_port, key_line or "")


def entry_to_update(
    config: Path, new: NewInstance, old_port: int | None, paths: Paths, key_line: str | None
) -> str | None:
    """The name of the existing entry this login re-adds (same host and user, and the same port
    or the same host key), else None."""
    if not config.exists():
        return None
    candidate = find_instance(config, {"name": "", "host": new.spec.host, "user": new.spec.user}, match_host_user=True)
    if candidate is None:
        return None
    if old_port == new.spec.port or (old_port is not None and same_machine(paths, new.spec.host, old_port, key_line)):
        return candidate
    return None


def final_name(
    paths: Paths, instances: Sequence[InstanceConfig], new: NewInstance, key_line: str | None, *, named: bool
) -> str:
    """The name to write under: the one the user gave; else the entry this login re-adds (same
    host and user, and the same port or host key: the provider moved it); else a new name."""
    if named:
        return new.name
    ports = {i.host.lower(): i.port for i in instances if i.user == new.spec.user}
    existing = entry_to_update(paths.config_file, new, ports.get(new.spec.host.lower()), paths, key_line)
    if existing is not None:
        return existing
    return suggest_name(new.spec, new.provider, {i.name for i in instances})


class Onboarder:
    """What the dashboard's add form needs: the config, the keyring, and hosts built as the
    dashboard builds them."""

    def __init__(self, settings: Settings, paths: Paths, secrets: SecretStore) -> None:
        self.settings, self.paths, self.secrets = settings, paths, secrets
        self.instances: list[InstanceConfig] = list(settings.instances)

    def login_host(self, new: NewInstance, password: SecretStr | None) -> SshHost:
        return login_host(new, password, self.paths, connect_timeout=self.settings.settings.connect_timeout_seconds)

    def update(self, name: str, fields: dict[str, Any]) -> InstanceConfig:
        """Rewrite entry `name` with `fields` (config.edit.REMOVE deletes a key); its new config.
        ConfigError (the file unchanged) when the result would not be a valid config."""
        upsert_instance(self.paths.config_file, {"name": name, **fields}, match_host_user=False)
        inst = load_settings(self.paths.config_file, must_exist=True).instance(name)
        self.instances = [inst if i.name == name else i for i in self.instances]
        return inst

    def finish(
        self, new: NewInstance, password: SecretStr | None, *, save_password: bool
    ) -> tuple[str, InstanceConfig, SshHost, str | None]:
        """Blocking (the keyring): store the password, write the entry; ("added" | "updated",
        its config, a host for the dashboard, a warning or None)."""
        warning = None
        if password is not None:
            self.secrets.remember(new.name, password)
            if save_password:
                try:
                    self.secrets.set_password(new.name, password)
                except GpuTuiError as exc:
                    warning = _("{problem} (kept in memory for this session)").format(problem=exc.message)
        how = save_instance(self.paths.config_file, new)
        inst = load_settings(self.paths.config_file, must_exist=True).instance(new.name)
        self.instances = [i for i in self.instances if i.name != inst.name] + [inst]
        return how, inst, build_ssh_host(inst, self.settings, self.paths, self.secrets), warning


def save_instance(config: Path, new: NewInstance) -> str:
    """Write the entry under `new.name`, updating one of that name: "added" or "updated"."""
    return upsert_instance(config, new.fields(), match_host_user=False)
