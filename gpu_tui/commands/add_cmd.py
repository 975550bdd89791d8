"""`gpu-tui add` (from a pasted login command, or hosts of ~/.ssh/config) and `gpu-tui remove`.

Nothing is written to the config until the login worked; the password goes to the keyring.
Questions are asked only on a terminal, and never with `--password-stdin`.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import re
import sys

from pydantic import SecretStr

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL
from gpu_tui.config.edit import remove_instance, upsert_instance
from gpu_tui.config.logsetup import redact
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore, env_var_name
from gpu_tui.config.settings import Settings
from gpu_tui.config.sshconfig import SshConfigHost, read_ssh_config
from gpu_tui.core.cost import parse_hourly_rate
from gpu_tui.core.errors import GpuTuiError, HostKeyUnknown, InputError, RemoteError
from gpu_tui.core.login import LoginSpec, guess_provider, parse_login, suggest_name
from gpu_tui.core.units import format_rate_per_hour
from gpu_tui.services.onboard import NewInstance, check_login, final_name, install_app_key, login_host, save_instance

__all__ = ["run_add", "run_remove"]


class Asker:
    """Questions on the terminal; `can_ask` False means every question takes its default."""

    def __init__(self, can_ask: bool) -> None:
        self.can_ask = can_ask

    def text(self, question: str, default: str = "") -> str:
        if not self.can_ask:
            return default
        answer = input(f"{question} [{default}]: " if default else f"{question}: ").strip()
        return answer or default

    def yes(self, question: str, default: bool) -> bool:
        if not self.can_ask:
            return default
        answer = input(f"{question} [{'Y/n' if default else 'y/N'}] ").strip().lower()
        return default if not answer else answer in ("y", "yes")

    def password(self, question: str) -> SecretStr | None:
        if not self.can_ask:
            return None
        value = getpass.getpass(f"{question}: ")
        return SecretStr(value) if value else None


def _read_password_stdin() -> SecretStr | None:
    value = sys.stdin.readline().rstrip("\r\n")
    return SecretStr(value) if value else None


def _rate(asker: Asker, args: argparse.Namespace, currency: str) -> float | None:
    if args.rate is not None:
        return float(args.rate)
    return parse_hourly_rate(asker.text(f"hourly price in {currency} (for the cost ticker; 0 if unknown)", ""))


async def _login(new: NewInstance, password: SecretStr | None, args: argparse.Namespace, asker: Asker,
                 settings: Settings, paths: Paths, install: bool) -> str | None:
    """Test the login (trusting a new host key only with the user's yes or --trust); install
    the app key when asked. Returns the server's host key line."""
    host = login_host(new, password, paths, connect_timeout=settings.settings.connect_timeout_seconds)
    try:
        try:
            await check_login(host)
        except HostKeyUnknown as exc:
            _decide_trust(exc, args, asker, new)
            host.trust_presented_key(exc.key_line)
            print(f"trusted {exc.fingerprint} for {new.spec.host}:{new.spec.port}")
            await check_login(host)
        print(f"login to {new.spec.user}@{new.spec.host}:{new.spec.port} works")
        if install:
            added = await install_app_key(host, paths)
            print("installed gpu-tui's key on the instance" if added else "gpu-tui's key was already installed")
        return host.server_key_line()
    finally:
        await host.close()


def _decide_trust(exc: HostKeyUnknown, args: argparse.Namespace, asker: Asker, new: NewInstance) -> None:
    where = f"{new.spec.host}:{new.spec.port}"
    if args.trust:
        if args.trust.strip() != exc.fingerprint:
            raise InputError(
                f"{where} offers host key {exc.fingerprint}, not {args.trust.strip()}: refused, nothing written"
            )
        return
    if not asker.can_ask:
        raise InputError(f"{where}: unknown host key {exc.fingerprint}. Check it against your provider's console, "
                         f"then add --trust {exc.fingerprint}")
    print(f"{where} is new. Its host key fingerprint is\n    {exc.fingerprint}")
    if not asker.yes("Trust it? (compare with your provider's console if it shows one)", False):
        raise InputError(f"{where}: host key not trusted; nothing written")


def run_add(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    if args.from_ssh_config:
        return _import_ssh_config(args, settings, paths)
    if args.hosts:
        raise InputError(
            f"add: one login command, quoted (\"ssh -p PORT user@host\"); extra words: {' '.join(args.hosts)}"
        )
    if not args.login:
        raise InputError(
            "add: paste the login command your provider shows, quoted: gpu-tui add \"ssh -p 23456 root@host\""
        )
    spec = parse_login(args.login)
    provider = args.provider or guess_provider(spec.host)
    asker = Asker(sys.stdin.isatty() and not args.password_stdin)
    password = _read_password_stdin() if args.password_stdin else asker.password(
        f"password for {spec.user}@{spec.host} (empty: use SSH keys)")
    if password is not None:
        redact(password.get_secret_value())
    rate = _rate(asker, args, settings.settings.currency)
    # a provisional name for messages and the key; the final one is known after the login
    new = NewInstance(
        name=args.name or suggest_name(spec, provider, set()), spec=spec, provider=provider, hourly_rate=rate
    )
    install = args.install_key or asker.yes(
        "Install gpu-tui's own key there, so later logins and sync need no password?", True
    )
    try:
        key_line = asyncio.run(_login(new, password, args, asker, settings, paths, install))
    except RemoteError as exc:
        sys.stderr.write(f"gpu-tui: {exc.line()} (nothing written to the config)\n")
        return EXIT_PARTIAL
    name = final_name(paths, settings.instances, new, key_line, named=bool(args.name))
    new = NewInstance(name=name, spec=spec, provider=provider, hourly_rate=rate)
    secrets = SecretStore()
    if password is not None:
        try:
            secrets.set_password(name, password)
        except GpuTuiError as exc:
            sys.stderr.write(f"gpu-tui: warning: {exc.message}\n")
    how = save_instance(paths.config_file, new)
    rate_text = f", {format_rate_per_hour(rate, settings.settings.currency)}" if rate is not None else ""
    print(f"{how} {name} ({provider}{rate_text}) in {paths.config_file}")
    if password is not None and secrets.keyring_problem is None:
        print(f"password stored in the keyring (service gpu-tui, user {name})")
    print(f"next: gpu-tui status {name}   or   gpu-tui")
    return EXIT_OK


def _alias_name(alias: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "-", alias)[:64] or "host"


def _choose(found: list[SshConfigHost], wanted: list[str], asker: Asker) -> list[SshConfigHost]:
    by_alias = {h.alias: h for h in found}
    if wanted:
        missing = [w for w in wanted if w not in by_alias]
        if missing:
            raise InputError(f"not in ~/.ssh/config: {', '.join(missing)} (there: {', '.join(by_alias) or 'none'})")
        return [by_alias[w] for w in wanted]
    if not asker.can_ask:
        raise InputError(f"name the hosts to add: gpu-tui add --from-ssh-config HOST... (there: {', '.join(by_alias)})")
    for i, h in enumerate(found, 1):
        print(f"  {i:>2}. {h.alias:<24} {h.user or getpass.getuser()}@{h.hostname}:{h.port}")
    answer = asker.text("which ones? (numbers like 1,3, or all)", "all")
    if answer.lower() == "all":
        return found
    picked = []
    for part in re.split(r"[,\s]+", answer):
        if not part.isdigit() or not 1 <= int(part) <= len(found):
            raise InputError(f"{part!r}: give numbers from 1 to {len(found)}")
        picked.append(found[int(part) - 1])
    return picked


def _import_ssh_config(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    found = read_ssh_config(paths.ssh_config)
    if not found:
        raise InputError(f"{paths.ssh_config}: no hosts to import (only `Host` entries without wildcards are listed)")
    wanted = ([args.login] if args.login else []) + list(args.hosts)
    asker = Asker(sys.stdin.isatty())
    for h in _choose(found, wanted, asker):
        # ssh semantics: no User means the local user name
        spec = LoginSpec(host=h.hostname, port=h.port, user=h.user or getpass.getuser(), identity_file=h.identity_file)
        provider = args.provider or guess_provider(h.hostname)
        new = NewInstance(name=_alias_name(h.alias), spec=spec, provider=provider, hourly_rate=args.rate)
        how = upsert_instance(paths.config_file, new.fields(), match_host_user=False)
        print(f"{how} {new.name} ({spec.user}@{spec.host}:{spec.port}, {provider})")
    print(f"in {paths.config_file}; set each one's hourly_rate there for the cost ticker")
    return EXIT_OK


def run_remove(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    name = args.name
    if not paths.config_file.exists() or not remove_instance(paths.config_file, name):
        known = ", ".join(i.name for i in settings.instances) or "none"
        raise InputError(f"remove: no instance {name!r} in {paths.config_file} (there: {known})")
    SecretStore().delete_password(name)
    print(f"removed {name} from {paths.config_file}, and its password from the keyring")
    if env_var_name(name) in os.environ:
        print(f"note: {env_var_name(name)} is still set in your environment")
    return EXIT_OK
