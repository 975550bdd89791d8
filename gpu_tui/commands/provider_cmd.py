"""`gpu-tui provider login`, `gpu-tui instances` and `gpu-tui import`: a provider account's
token, its instances, and config entries for them.

A wrong token or an API that does not answer is one line on stderr and exit 3, and an import
then writes nothing: every instance is listed before the first entry is written.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys

from pydantic import SecretStr

from gpu_tui.commands import EXIT_OK
from gpu_tui.commands.support.cells import format_rows
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import Settings
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.providers import API_PROVIDERS, STATUS_WORDS, ProviderInstance
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_rate_per_hour
from gpu_tui.services.providers import LABELS, client_for, token_env, token_for, token_key
from gpu_tui.services.providers.ops import configured_ids, plan_import, write_import

__all__ = ["run_provider", "run_instances", "run_import", "require_token", "instance_json"]


def require_token(provider: str, secrets: SecretStore) -> SecretStr:
    token = token_for(provider, secrets)
    if token is None:
        raise InputError(
            _("no {label} API token: run `gpu-tui provider login {provider}`, or set {variable}").format(
                label=LABELS[provider], provider=provider, variable=token_env(provider)
            )
        )
    return token


def run_provider(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    provider = args.provider
    if args.token_stdin:
        text = sys.stdin.readline().strip()
    elif sys.stdin.isatty():
        text = getpass.getpass(_("{label} API token (not shown): ").format(label=LABELS[provider])).strip()
    else:
        raise InputError(_("provider login: no terminal to ask on; pipe the token with --token-stdin"))
    if not text:
        raise InputError(_("provider login: the token is empty"))
    token = SecretStr(text)
    listed = asyncio.run(client_for(provider, token).list_instances())  # a wrong token raises AuthFailed: exit 3
    SecretStore().set_password(token_key(provider), token)
    print(
        _("{label} token works ({count} instances on the account) and is stored in the keyring as {key!r}").format(
            label=LABELS[provider], count=len(listed), key=token_key(provider)
        )
    )
    return EXIT_OK


def instance_json(inst: ProviderInstance, configured_as: str | None) -> dict[str, object]:
    return {
        "provider": inst.provider,
        "id": inst.id,
        "name": inst.name,
        "status": inst.status,
        "provider_status": inst.raw_status,
        "gpu": inst.gpu,
        "price_per_hour": inst.price_per_hour,
        "currency": inst.currency,
        "ssh_host": inst.ssh_host,
        "ssh_port": inst.ssh_port,
        "ssh_user": inst.ssh_user,
        "configured_as": configured_as,
    }


def _table(rows: list[tuple[ProviderInstance, str | None]]) -> str:
    head = [_("PROVIDER"), _("ID"), _("NAME"), _("STATUS"), _("GPU"), _("PRICE"), _("IN CONFIG")]
    # the provider's words are data: a name with escape sequences must not drive the terminal
    body = [
        [
            LABELS[i.provider],
            printable(i.id),
            printable(i.name) or "-",
            _(STATUS_WORDS[i.status]),
            printable(i.gpu) or "-",
            format_rate_per_hour(i.price_per_hour, i.currency),
            name or "-",
        ]
        for i, name in rows
    ]
    return "\n".join(format_rows([head, *body], right=(5,)))


async def _list(providers: list[str], secrets: SecretStore) -> list[ProviderInstance]:
    tokens = [(p, require_token(p, secrets)) for p in providers]
    found = await asyncio.gather(*(client_for(p, t).list_instances() for p, t in tokens))
    return [i for batch in found for i in batch]


def run_instances(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    secrets = SecretStore()
    if args.provider:
        providers = [args.provider]
    else:
        providers = [p for p in API_PROVIDERS if token_for(p, secrets) is not None]
        if not providers:
            raise InputError(_("no provider token stored: run `gpu-tui provider login runpod|vast|autodl`"))
    listed = asyncio.run(_list(providers, secrets))
    rows = [(i, configured_ids(settings, i.provider).get(i.id)) for i in listed]
    if args.json:
        print(json.dumps({"instances": [instance_json(i, n) for i, n in rows]}, indent=2, ensure_ascii=False))
    elif rows:
        print(_table(rows))
    else:
        print(_("no instances on the account"))
    return EXIT_OK


def _choose(listed: list[ProviderInstance], settings: Settings) -> list[str]:
    """The chooser of `import` on a terminal without ids: numbers, or `all`."""
    rows = [(i, configured_ids(settings, i.provider).get(i.id)) for i in listed]
    lines = _table(rows).splitlines()
    print("    " + lines[0])
    for n, line in enumerate(lines[1:], 1):
        print(f"{n:>3} {line}")
    answer = input(_("Import which? Numbers separated by spaces, or 'all' (Enter: none): ")).strip().lower()
    if answer in ("all", "a", "全部"):
        return [i.id for i in listed]
    picked: list[str] = []
    for word in answer.replace(",", " ").split():
        if not word.isdigit() or not 1 <= int(word) <= len(listed):
            raise InputError(_("import: {word!r} is not one of the numbers 1-{n}").format(word=word, n=len(listed)))
        picked.append(listed[int(word) - 1].id)
    return picked


def run_import(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    if args.all and args.ids:
        raise InputError(_("import: give instance ids or --all, not both"))
    token = require_token(args.provider, SecretStore())
    listed = asyncio.run(client_for(args.provider, token).list_instances())
    ids = list(args.ids)
    if not args.all and not ids:
        if not sys.stdin.isatty() or args.json:
            raise InputError(_("import {provider}: name the instance ids, or --all").format(provider=args.provider))
        if not listed:
            print(_("no instances on the account"))
            return EXIT_OK
        ids = _choose(listed, settings)
    plans = plan_import(listed, settings, ids, all_=args.all)
    write_import(paths.config_file, plans)
    if args.json:
        print(
            json.dumps(
                {"imported": [{"action": p.action, **instance_json(p.instance, p.name)} for p in plans]},
                indent=2,
                ensure_ascii=False,
            )
        )
        return EXIT_OK
    for p in plans:
        where = (
            f"{p.instance.ssh_user}@{p.instance.ssh_host}:{p.instance.ssh_port}"
            if p.instance.has_endpoint
            else _("no SSH endpoint yet (stopped): `gpu-tui start {name}` learns it").format(name=p.name)
        )
        words = _("added") if p.action == "added" else _("updated")
        print(f"{words} {p.name} ({LABELS[p.instance.provider]} {p.instance.id}): {where}")
    if not plans:
        print(_("nothing imported"))
    other = sorted({p.instance.currency for p in plans} - {settings.settings.currency})
    if other:
        # no exchange rates: money stays per currency, and the daily budget counts settings.currency only
        print(
            _(
                "note: these bill in {currencies}, settings.currency is {currency}; costs are shown per "
                "currency, never converted, and the daily budget counts {currency} only"
            ).format(currencies=", ".join(other), currency=settings.settings.currency)
        )
    return EXIT_OK
