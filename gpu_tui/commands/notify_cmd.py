"""`gpu-tui notify add|list|remove|test`: the places notifications go.

A target URL is a secret: `add` keeps it in the keyring (read from a hidden prompt or stdin, so
it need not be in argv or the shell history), and every printout masks it.

The instance side (services/notify/ship.py): after add/remove the targets go to every instance
reachable then; `test` sends once from the laptop and once from each instance (or the one named).
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from pydantic import SecretStr

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL, EXIT_USAGE
from gpu_tui.commands.support.cells import format_rows
from gpu_tui.commands.support.output import error_line
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import _
from gpu_tui.core.notify.rules import EVENTS
from gpu_tui.core.text import printable
from gpu_tui.remote.host import Host
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.notify.instance import TargetResult, send_test_from_instance
from gpu_tui.services.notify.send import AUTODL_WECHAT, Delivery, Target, send_all, url_problem
from gpu_tui.services.notify.ship import ship
from gpu_tui.services.notify.targets import add_target, remove_target, targets
from gpu_tui.services.providers.autodl_balance import TOKEN_NAME

T = TypeVar("T")

__all__ = ["install_on_instances", "notify_json", "run_notify", "test_from_instances"]


def _err(line: str) -> None:
    sys.stderr.write(f"gpu-tui: {line}\n")


async def _each_instance(
    settings: Settings,
    paths: Paths,
    store: SecretStore,
    body: Callable[[Host, InstanceConfig], Awaitable[T]],
    names: Sequence[str] | None = None,
) -> list[tuple[InstanceConfig, T | GpuTuiError]]:
    """`body` on every configured instance (or `names`) at once, each over its own connection;
    an instance that cannot be reached gives its error instead."""
    chosen = [i for i in settings.instances if names is None or i.name in names]

    async def one(inst: InstanceConfig) -> tuple[InstanceConfig, T | GpuTuiError]:
        host = build_ssh_host(inst, settings, paths, store, sighting=True)
        try:
            await host.connect()
            return inst, await body(host, inst)
        except GpuTuiError as exc:
            return inst, exc
        finally:
            await host.close()

    return list(await asyncio.gather(*(one(i) for i in chosen)))


def install_on_instances(settings: Settings, paths: Paths, store: SecretStore) -> int:
    """After `notify add` / `remove`: ship the targets to every instance reachable now (the
    others get them before their next job or autostop) and say which targets the instance side
    cannot send. The targets are saved either way: exit 0."""
    if not settings.instances:
        return EXIT_OK
    every = targets(settings, store)
    done = asyncio.run(
        _each_instance(settings, paths, store, lambda h, i: ship(h, i, every, settings.currency_of(i), store))
    )
    said: set[str] = set()
    for inst, result in done:
        if isinstance(result, GpuTuiError):
            print(
                _("{name}: not reachable now ({error}); it gets the targets before its next job or autostop").format(
                    name=inst.name, error=error_line(result)
                )
            )
            continue
        for warning in result:
            if warning not in said:
                said.add(warning)
                print(_("note: {warning}").format(warning=warning))
    return EXIT_OK


def test_from_instances(settings: Settings, paths: Paths, names: Sequence[str] | None, store: SecretStore) -> int:
    """After the laptop's test: send once from each instance (`names`, else all) with the targets
    as they are now; EXIT_PARTIAL naming each target or instance that did not answer."""
    if not settings.instances or names == []:
        return EXIT_OK
    every = targets(settings, store)

    async def once(host: Host, inst: InstanceConfig) -> list[TargetResult]:
        await ship(host, inst, every, settings.currency_of(inst), store)
        return await send_test_from_instance(host, inst)

    failed: list[str] = []
    for inst, result in asyncio.run(_each_instance(settings, paths, store, once, names)):
        if isinstance(result, GpuTuiError):
            failed.append(inst.name)
            print(_("FAILED  {name}: {error}").format(name=inst.name, error=error_line(result)))
            continue
        if not result:
            print(_("{name}: no target the instance can send (see `gpu-tui notify list`)").format(name=inst.name))
        for r in result:
            if r.ok:
                print(_("ok      {name} -> {url}").format(name=inst.name, url=printable(r.target_masked)))
            else:
                failed.append(f"{inst.name} -> {printable(r.target_masked)}")
                print(
                    _("FAILED  {name} -> {url}: {error}").format(
                        name=inst.name, url=printable(r.target_masked), error=printable(r.error or "?")
                    )
                )
    if failed:
        _err(_("notify test: from the instance, no answer for {targets}").format(targets=", ".join(failed)))
        return EXIT_PARTIAL
    return EXIT_OK


def _read_url(arg: str | None) -> str:
    if arg == "-" or (arg is None and not sys.stdin.isatty()):
        return sys.stdin.readline().strip()
    if arg is None:
        return getpass.getpass(_("notification URL (hidden): ")).strip()
    return arg.strip()


def notify_json(every: list[Target]) -> dict[str, object]:
    """The CONTRACTS.md `notify list --json` shape; URLs masked, English keys and values."""
    return {
        "events": list(EVENTS),
        "targets": [
            {"number": t.number, "source": t.source, "service": t.service, "url": t.shown, "events": list(t.events)}
            for t in every
        ],
    }


def _add(args: argparse.Namespace, settings: Settings, paths: Paths, store: SecretStore) -> int:
    url = _read_url(args.url)
    if not url:
        _err(_("notify add: no URL given (pass it, '-' for stdin, or type it at the prompt)"))
        return EXIT_USAGE
    problem = url_problem(url)
    if problem is not None:
        _err(_("notify add: {problem}").format(problem=problem))
        return EXIT_USAGE
    new = add_target(store, url, args.events)
    shown = next(t for t in targets(settings, store) if t.url.get_secret_value() == url and t.source == "keyring")
    words = (
        _("added target {n}: {url} ({service}), events: {events}")
        if new
        else _("target {n} was there already; its events are now: {events} ({url}, {service})")
    )
    print(words.format(n=shown.number, url=shown.shown, service=shown.service, events=", ".join(shown.events)))
    if url == AUTODL_WECHAT and store.get_password(TOKEN_NAME) is None:
        print(
            _(
                "note: autodl-wechat needs the AutoDL developer token (`keyring set gpu-tui provider:autodl`); "
                "none is stored yet"
            )
        )
    return install_on_instances(settings, paths, store)


def _list(args: argparse.Namespace, settings: Settings, store: SecretStore) -> int:
    every = targets(settings, store)
    if args.json:
        print(json.dumps(notify_json(every), ensure_ascii=False))
        return EXIT_OK
    if not every:
        print(_("no notification targets; add one with `gpu-tui notify add` (or [notify] urls in the config)"))
        return EXIT_OK
    rows = [(_("N"), _("FROM"), _("SERVICE"), _("TARGET"), _("EVENTS"))]
    rows += [
        (str(t.number), _("config") if t.source == "config" else _("keyring"), t.service, t.shown, ",".join(t.events))
        for t in every
    ]
    print("\n".join(format_rows(rows)))
    return EXIT_OK


def _pick(every: list[Target], name: str | None) -> list[Target]:
    if name is None:
        return every
    if name.isdigit():
        return [t for t in every if t.number == int(name)]
    low = name.lower()
    return [
        t
        for t in every
        if t.service.lower() == low
        or t.url.get_secret_value().split("://")[0].lower() == low
        or (name == AUTODL_WECHAT and t.url.get_secret_value() == AUTODL_WECHAT)
    ]


def _report(results: list[Delivery]) -> int:
    failed = [r for r in results if not r.ok]
    for r in results:
        t = r.target
        if r.ok:
            print(
                _("ok      {n} {url} ({service}) answered in {seconds:.1f} s").format(
                    n=t.number, url=t.shown, service=t.service, seconds=r.seconds
                )
            )
        else:
            print(
                _("FAILED  {n} {url} ({service}): {error}").format(
                    n=t.number, url=t.shown, service=t.service, error=r.error
                )
            )
    if failed:
        _err(
            _("notify test: no answer from {targets}").format(
                targets=", ".join(f"{r.target.number} {r.target.shown}" for r in failed)
            )
        )
        return EXIT_PARTIAL
    return EXIT_OK


def _test(args: argparse.Namespace, settings: Settings, paths: Paths, store: SecretStore) -> int:
    every = targets(settings, store)
    # NAME: an instance (the laptop's test, then that instance's), or a target (its number or service)
    instance = args.name if args.name in {i.name for i in settings.instances} else None
    wanted = every if instance else _pick(every, args.name)
    if not every:
        _err(_("notify test: no targets; add one with `gpu-tui notify add`"))
        return EXIT_USAGE
    if not wanted:
        _err(_("notify test: no target {name!r}; `gpu-tui notify list` shows them").format(name=args.name))
        return EXIT_USAGE
    if not 0.5 <= args.timeout <= 60:
        _err(_("notify test: --timeout must be 0.5..60 seconds"))
        return EXIT_USAGE
    token: SecretStr | None = None
    if any(t.url.get_secret_value() == AUTODL_WECHAT for t in wanted):
        token = store.get_password(TOKEN_NAME)
    title = _("gpu-tui test")
    body = _("A test from gpu-tui on the laptop: this target works.")
    results = asyncio.run(send_all(wanted, title, body, wechat_token=token, timeout=args.timeout))
    code = _report(results)
    return max(code, test_from_instances(settings, paths, [instance] if instance else None, store))


def run_notify(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    store = SecretStore()
    verb = args.notify_verb
    if verb == "add":
        return _add(args, settings, paths, store)
    if verb == "list":
        return _list(args, settings, store)
    if verb == "remove":
        gone = remove_target(settings, store, args.number)
        print(_("removed target {n}: {url}").format(n=args.number, url=gone.shown))
        return install_on_instances(settings, paths, store)
    return _test(args, settings, paths, store)
