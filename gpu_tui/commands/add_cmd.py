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
from gpu_tui.commands.support.cells import cell_len, pad
from gpu_tui.commands.support.output import error_line, is_yes, yes_no_suffix
from gpu_tui.config.edit import remove_instance, upsert_instance
from gpu_tui.config.logsetup import redact
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore, env_var_name
from gpu_tui.config.settings import Settings
from gpu_tui.config.sshconfig import SshConfigHost, read_ssh_config
from gpu_tui.core.errors import GpuTuiError, HostKeyUnknown, InputError, RemoteError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.logincmd import LoginSpec, guess_provider, parse_login, suggest_name
from gpu_tui.core.money.cost import parse_hourly_rate
from gpu_tui.core.units import format_rate_per_hour
from gpu_tui.services.onboard import NewInstance, check_login, final_name, install_app_key, login_host, save_instance

__all__ = ["run_add", "run_remove"]

HOW = {"added": N_("added {name}"), "updated": N_("updated {name}")}
"""What upsert_instance did, as the summary line says it."""


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
        answer = input(f"{question} {yes_no_suffix(default)} ").strip()
        return default if not answer else is_yes(answer)

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
    question = _("hourly price in {currency} (for the cost ticker; 0 if unknown)").format(currency=currency)
    return parse_hourly_rate(asker.text(question, ""))


async def _login(
    new: NewInstance,
    password: SecretStr | None,
    args: argparse.Namespace,
    asker: Asker,
    settings: Settings,
    paths: Paths,
    install: bool,
) -> str | None:
    """Test the login (trusting a new host key only with the user's yes or --trust); install
    the app key when asked. Returns the server's host key line."""
    host = login_host(new, password, paths, connect_timeout=settings.settings.connect_timeout_seconds)
    try:
        try:
            await check_login(host)
        except HostKeyUnknown as exc:
            _decide_trust(exc, args, asker, new)
            host.trust_presented_key(exc.key_line)
            print(
                _("trusted {fingerprint} for {host}:{port}").format(
                    fingerprint=exc.fingerprint, host=new.spec.host, port=new.spec.port
                )
            )
            await check_login(host)
        print(
            _("login to {user}@{host}:{port} works").format(user=new.spec.user, host=new.spec.host, port=new.spec.port)
        )
        if install:
            added = await install_app_key(host, paths)
            print(_("installed gpu-tui's key on the instance") if added else _("gpu-tui's key was already installed"))
        return host.server_key_line()
    finally:
        await host.close()


def _decide_trust(exc: HostKeyUnknown, args: argparse.Namespace, asker: Asker, new: NewInstance) -> None:
    where = f"{new.spec.host}:{new.spec.port}"
    if args.trust:
        if args.trust.strip() != exc.fingerprint:
            raise InputError(
                _("{where} offers host key {fingerprint}, not {trusted}: refused, nothing written").format(
                    where=where, fingerprint=exc.fingerprint, trusted=args.trust.strip()
                )
            )
        return
    if not asker.can_ask:
        raise InputError(
            _(
                "{where}: unknown host key {fingerprint}. Check it against your provider's console, "
                "then add --trust {fingerprint}"
            ).format(where=where, fingerprint=exc.fingerprint)
        )
    print(_("{where} is new. Its host key fingerprint is").format(where=where))
    print(f"    {exc.fingerprint}")
    if not asker.yes(_("Trust it? (compare with your provider's console if it shows one)"), False):
        raise InputError(_("{where}: host key not trusted; nothing written").format(where=where))


def run_add(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    if args.from_ssh_config:
        return _import_ssh_config(args, settings, paths)
    if args.hosts:
        raise InputError(
            _('add: one login command, quoted ("ssh -p PORT user@host"); extra words: {words}').format(
                words=" ".join(args.hosts)
            )
        )
    if not args.login:
        raise InputError(
            _('add: paste the login command your provider shows, quoted: gpu-tui add "ssh -p 23456 root@host"')
        )
    spec = parse_login(args.login)
    provider = args.provider or guess_provider(spec.host)
    asker = Asker(sys.stdin.isatty() and not args.password_stdin)
    password = (
        _read_password_stdin()
        if args.password_stdin
        else asker.password(
            _("password for {user}@{host} (empty: use SSH keys)").format(user=spec.user, host=spec.host)
        )
    )
    if password is not None:
        redact(password.get_secret_value())
    rate = _rate(asker, args, settings.settings.currency)
    # a provisional name for messages and the key; the final one is known after the login
    new = NewInstance(
        name=args.name or suggest_name(spec, provider, set()), spec=spec, provider=provider, hourly_rate=rate
    )
    install = args.install_key or asker.yes(
        _("Install gpu-tui's own key there, so later logins and sync need no password?"), True
    )
    try:
        key_line = asyncio.run(_login(new, password, args, asker, settings, paths, install))
    except RemoteError as exc:
        line = _("{error} (nothing written to the config)").format(error=error_line(exc))
        sys.stderr.write(f"gpu-tui: {line}\n")
        return EXIT_PARTIAL
    name = final_name(paths, settings.instances, new, key_line, named=bool(args.name))
    new = NewInstance(name=name, spec=spec, provider=provider, hourly_rate=rate)
    secrets = SecretStore()
    if password is not None:
        try:
            secrets.set_password(name, password)
        except GpuTuiError as exc:
            sys.stderr.write("gpu-tui: " + _("warning: {message}").format(message=exc.message) + "\n")
    how = save_instance(paths.config_file, new)
    rate_text = f", {format_rate_per_hour(rate, settings.settings.currency)}" if rate is not None else ""
    done = _(HOW[how]).format(name=name) if how in HOW else f"{how} {name}"
    print(_("{done} ({details}) in {path}").format(done=done, details=provider + rate_text, path=paths.config_file))
    if password is not None and secrets.keyring_problem is None:
        print(_("password stored in the keyring (service gpu-tui, user {name})").format(name=name))
    print(_("next: gpu-tui status {name}   or   gpu-tui").format(name=name))
    return EXIT_OK


def _alias_name(alias: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "-", alias)[:64] or "host"


def _choose(found: list[SshConfigHost], wanted: list[str], asker: Asker) -> list[SshConfigHost]:
    by_alias = {h.alias: h for h in found}
    if wanted:
        missing = [w for w in wanted if w not in by_alias]
        if missing:
            raise InputError(
                _("not in ~/.ssh/config: {missing} (there: {there})").format(
                    missing=", ".join(missing), there=", ".join(by_alias) or _("none")
                )
            )
        return [by_alias[w] for w in wanted]
    if not asker.can_ask:
        raise InputError(
            _("name the hosts to add: gpu-tui add --from-ssh-config HOST... (there: {there})").format(
                there=", ".join(by_alias)
            )
        )
    for i, h in enumerate(found, 1):
        alias = pad(h.alias, max(24, cell_len(h.alias)))
        print(f"  {i:>2}. {alias} {h.user or getpass.getuser()}@{h.hostname}:{h.port}")
    answer = asker.text(_("which ones? (numbers like 1,3, or all)"), "all")
    if answer.lower() in ("all", "全部"):
        return found
    picked = []
    for part in re.split(r"[,\s]+", answer):
        if not part.isdigit() or not 1 <= int(part) <= len(found):
            raise InputError(_("{part!r}: give numbers from 1 to {n}").format(part=part, n=len(found)))
        picked.append(found[int(part) - 1])
    return picked


def _import_ssh_config(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    found = read_ssh_config(paths.ssh_config)
    if not found:
        raise InputError(
            _("{path}: no hosts to import (only `Host` entries without wildcards are listed)").format(
                path=paths.ssh_config
            )
        )
    wanted = ([args.login] if args.login else []) + list(args.hosts)
    asker = Asker(sys.stdin.isatty())
    for h in _choose(found, wanted, asker):
        # ssh semantics: no User means the local user name
        spec = LoginSpec(host=h.hostname, port=h.port, user=h.user or getpass.getuser(), identity_file=h.identity_file)
        provider = args.provider or guess_provider(h.hostname)
        new = NewInstance(name=_alias_name(h.alias), spec=spec, provider=provider, hourly_rate=args.rate)
        how = upsert_instance(paths.config_file, new.fields(), match_host_user=False)
        done = _(HOW[how]).format(name=new.name) if how in HOW else f"{how} {new.name}"
        print(f"{done} ({spec.user}@{spec.host}:{spec.port}, {provider})")
    print(_("in {path}; set each one's hourly_rate there for the cost ticker").format(path=paths.config_file))
    return EXIT_OK


def run_remove(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    name = args.name
    if not paths.config_file.exists() or not remove_instance(paths.config_file, name):
        known = ", ".join(i.name for i in settings.instances) or _("none")
        raise InputError(
            _("remove: no instance {name!r} in {path} (there: {there})").format(
                name=name, path=paths.config_file, there=known
            )
        )
    SecretStore().delete_password(name)
    print(_("removed {name} from {path}, and its password from the keyring").format(name=name, path=paths.config_file))
    if env_var_name(name) in os.environ:
        print(_("note: {var} is still set in your environment").format(var=env_var_name(name)))
    return EXIT_OK
