"""What the commands and the dashboard do with a provider account: import its instances into
the config, power one on and wait for SSH, power one off and prove it through the API.

The API is the second proof of a stop (services/power.py has the first: the link closed and a
fresh login failed): an instance counts as stopped here only once the provider itself reports
it stopped (RunPod `desiredStatus` EXITED, Vast `actual_status` stopped, AutoDL Pro shutdown).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gpu_tui.config.edit import upsert_instance
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import GpuTuiError, InputError, RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.providers import API_PROVIDERS, STATUS_WORDS, ProviderInstance, import_fields, import_name
from gpu_tui.remote.host import Host
from gpu_tui.services.power import Before, ShutdownResult, shutdown_many
from gpu_tui.services.providers import LABELS, ProviderClient, client_for, token_env, token_for

__all__ = [
    "ImportPlan",
    "plan_import",
    "write_import",
    "start_instance",
    "stop_via_api",
    "ssh_answers",
    "StartResult",
    "configured_ids",
    "has_api",
    "shutdown_fleet",
    "api_clients",
    "importable_providers",
    "import_accounts",
    "refreshed_fields",
]

START_WAIT_SECONDS = 900.0
STOP_VERIFY_SECONDS = 120.0
POLL_SECONDS = 3.0


def configured_ids(settings: Settings, provider: str) -> dict[str, str]:
    """provider_id -> config name, for this provider's entries."""
    return {i.provider_id: i.name for i in settings.instances if i.provider == provider and i.provider_id}


@dataclass(frozen=True, slots=True)
class ImportPlan:
    instance: ProviderInstance
    name: str
    action: Literal["added", "updated"]
    fields: dict[str, object]


def plan_import(
    listed: Sequence[ProviderInstance],
    settings: Settings,
    ids: Iterable[str],
    *,
    all_: bool,
) -> list[ImportPlan]:
    """Which entries an import writes: the named ids (or all); an id already in the config
    updates that entry (matched by provider and provider_id), never a second one."""
    wanted = list(dict.fromkeys(ids))
    by_id = {i.id: i for i in listed}
    missing = [i for i in wanted if i not in by_id]
    if missing:
        known = ", ".join(by_id) or _("none")
        raise InputError(
            _("no instance {ids} on this account; it has: {known}").format(ids=", ".join(missing), known=known)
        )
    chosen = list(listed) if all_ else [by_id[i] for i in wanted]
    taken = {i.name for i in settings.instances}
    plans: list[ImportPlan] = []
    for inst in chosen:
        existing = configured_ids(settings, inst.provider).get(inst.id)
        name = existing or import_name(inst, taken)
        taken.add(name)
        fields = import_fields(inst, name=name, settings_currency=settings.settings.currency)
        if existing and not inst.has_endpoint:
            # a stopped instance has no endpoint: keep the one the config knows
            for key in ("host", "port", "user"):
                fields.pop(key, None)
        plans.append(ImportPlan(inst, name, "updated" if existing else "added", fields))
    return plans


def write_import(config: Path, plans: Iterable[ImportPlan]) -> None:
    for plan in plans:
        # by name only: two instances behind one gateway host are two entries
        upsert_instance(config, plan.fields, match_host_user=False)


async def ssh_answers(host: str, port: int, timeout: float = 5.0) -> bool:
    """An SSH server answers there (its banner), without logging in: a start must not need the
    host key trusted yet (that question is for the first real connection)."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    except (OSError, TimeoutError):
        return False
    try:
        line = await asyncio.wait_for(reader.readline(), timeout)
        return line.startswith(b"SSH-")
    except (OSError, TimeoutError):
        return False
    finally:
        writer.close()
        try:
            await writer.wait_closed()
        except OSError:
            pass  # the server hung up first: nothing left to close


@dataclass(frozen=True, slots=True)
class StartResult:
    name: str
    ok: bool
    detail: str
    seconds: float
    instance: ProviderInstance | None = None
    """The provider's last word on it (its endpoint, once known)."""


def _require_id(inst: InstanceConfig) -> str:
    if not inst.provider_id:
        raise InputError(
            _(
                "{name} has no provider_id in the config: import it (`gpu-tui import {provider}`) "
                "so gpu-tui knows which instance of the account it is"
            ).format(name=inst.name, provider=inst.provider)
        )
    return inst.provider_id


async def start_instance(
    inst: InstanceConfig,
    client: ProviderClient,
    *,
    wait: bool = True,
    progress: Callable[[str], None] = lambda line: None,
    wait_seconds: float = START_WAIT_SECONDS,
    poll: float = POLL_SECONDS,
) -> StartResult:
    """Power on through the API; with `wait`, poll the API until it runs with an endpoint and
    SSH answers there. Never raises for the provider's own failures."""
    started = time.monotonic()

    def result(ok: bool, detail: str, pi: ProviderInstance | None = None) -> StartResult:
        return StartResult(inst.name, ok, detail, round(time.monotonic() - started, 2), pi)

    try:
        await client.start(_require_id(inst))
    except GpuTuiError as exc:
        return result(False, _("not started: {error}").format(error=exc.line()))
    progress(_("{provider} accepted the power-on").format(provider=LABELS[inst.provider]))
    if not wait:
        return result(True, _("powering on (not waiting for SSH)"))
    last = ""
    pi: ProviderInstance | None = None
    while time.monotonic() - started < wait_seconds:
        try:
            pi = await client.get(inst.provider_id)
        except GpuTuiError as exc:
            if not isinstance(exc, RemoteError):
                return result(False, _("started, but the API stopped answering: {error}").format(error=exc.line()))
            pi = None
        if pi is not None:
            seen = _("{status} ({raw})").format(status=_(STATUS_WORDS[pi.status]), raw=pi.raw_status or "-")
            where = f" {pi.ssh_host}:{pi.ssh_port}" if pi.has_endpoint else ""
            if seen + where != last:
                last = seen + where
                progress(
                    _("{provider}: {status}{where}").format(provider=LABELS[inst.provider], status=seen, where=where)
                )
            if pi.status == "running" and pi.ssh_host and pi.ssh_port and await ssh_answers(pi.ssh_host, pi.ssh_port):
                return result(
                    True,
                    _("running, SSH answers at {host}:{port} (after {seconds:.1f} s)").format(
                        host=pi.ssh_host, port=pi.ssh_port, seconds=time.monotonic() - started
                    ),
                    pi,
                )
        await asyncio.sleep(poll)
    return result(
        False,
        _("powered on, but SSH did not answer within {seconds:g} s (status: {status})").format(
            seconds=wait_seconds, status=last or _("unknown")
        ),
        pi,
    )


def refreshed_fields(inst: InstanceConfig, result: StartResult) -> dict[str, object]:
    """What the API says differently from the entry after a start: the endpoint (a start can
    move an instance) and the price per hour (what the ledger bills from now on)."""
    pi = result.instance
    if pi is None:
        return {}
    fields: dict[str, object] = {}
    if (
        pi.ssh_host
        and pi.ssh_port
        and (pi.ssh_host, pi.ssh_port, pi.ssh_user or inst.user) != (inst.host, inst.port, inst.user)
    ):
        fields.update(host=pi.ssh_host, port=pi.ssh_port, user=pi.ssh_user or inst.user)
    if pi.price_per_hour is not None and round(pi.price_per_hour, 4) != inst.hourly_rate:
        fields["hourly_rate"] = round(pi.price_per_hour, 4)
    return fields


async def stop_via_api(
    inst: InstanceConfig,
    client: ProviderClient,
    *,
    verify_seconds: float = STOP_VERIFY_SECONDS,
    poll: float = POLL_SECONDS,
    already_sent: bool = False,
) -> ShutdownResult:
    """Power off through the API and wait until the API itself reports the instance stopped;
    anything short of that is reported as NOT shut down."""
    started = time.monotonic()

    def result(stopped: bool, detail: str) -> ShutdownResult:
        return ShutdownResult(inst.name, stopped, detail, round(time.monotonic() - started, 2))

    label = LABELS[inst.provider]
    try:
        if not already_sent:
            # one that is stopped already needs no stop (some APIs refuse one): the status is the proof
            if (await client.get(_require_id(inst))).status != "stopped":
                await client.stop(inst.provider_id)
    except GpuTuiError as exc:
        return result(False, _("NOT shut down: {error}").format(error=exc.line()))
    seen = ""
    while True:
        try:
            pi = await client.get(inst.provider_id)
            seen = pi.raw_status or pi.status
            if pi.status == "stopped":
                return result(
                    True,
                    _("stopped (verified by the {provider} API: {status}, in {seconds:.1f} s)").format(
                        provider=label, status=seen, seconds=time.monotonic() - started
                    ),
                )
        except GpuTuiError as exc:
            seen = exc.line()
        if time.monotonic() - started >= verify_seconds:
            still = _("NOT shut down: the {provider} API still says {status!r} after {seconds:g} s")
            return result(False, still.format(provider=label, status=seen, seconds=verify_seconds))
        await asyncio.sleep(poll)


def has_api(inst: InstanceConfig) -> bool:
    """The provider's API can power this instance (imported: provider and provider_id known)."""
    return inst.provider in API_PROVIDERS and bool(inst.provider_id)


async def shutdown_fleet(
    targets: Sequence[InstanceConfig],
    make_host: Callable[[InstanceConfig], Host],
    clients: Mapping[str, ProviderClient],
    *,
    via_api: bool,
    before: Before | None = None,
    verify_seconds: float = STOP_VERIFY_SECONDS,
    poll: float = POLL_SECONDS,
) -> list[ShutdownResult]:
    """Shut every target down: through the API when `via_api` (for those with one and a token in
    `clients`), else over SSH, and through the API after all when SSH cannot reach it. Results
    in the order given."""

    def api_for(inst: InstanceConfig) -> ProviderClient | None:
        return clients.get(inst.provider) if has_api(inst) else None

    by_api = [t for t in targets if via_api and api_for(t) is not None]
    by_ssh = [t for t in targets if t not in by_api]

    async def api(inst: InstanceConfig) -> ShutdownResult:
        client = api_for(inst)
        assert client is not None
        if before is not None:
            why = await before(inst)
            if why is not None:
                return ShutdownResult(inst.name, False, _("not shut down: {reason}").format(reason=why), 0.0)
        return await stop_via_api(inst, client, verify_seconds=verify_seconds, poll=poll)

    async def ssh_then_api() -> list[ShutdownResult]:
        done = await shutdown_many(by_ssh, make_host, before=before)
        again = [
            (n, t, c)
            for n, (t, r) in enumerate(zip(by_ssh, done, strict=True))
            if r.unreachable and (c := api_for(t)) is not None
        ]
        retried = await asyncio.gather(
            *(stop_via_api(t, c, verify_seconds=verify_seconds, poll=poll) for _n, t, c in again)
        )
        for (n, _t, _c), r in zip(again, retried, strict=True):
            done[n] = r
        return done

    api_results, ssh_results = await asyncio.gather(asyncio.gather(*(api(t) for t in by_api)), ssh_then_api())
    found = {r.name: r for r in [*api_results, *ssh_results]}
    return [found[t.name] for t in targets]


def api_clients(targets: Iterable[InstanceConfig], secrets: SecretStore, required: bool) -> dict[str, ProviderClient]:
    """A client per provider of the imported targets whose token is stored; with `required`
    (`--via-api`) a missing token is refused before anything runs."""
    clients: dict[str, ProviderClient] = {}
    for provider in dict.fromkeys(t.provider for t in targets if has_api(t)):
        token = token_for(provider, secrets)
        if token is not None:
            clients[provider] = client_for(provider, token)
        elif required:
            raise InputError(
                _(
                    "shutdown --via-api: no {label} API token: run `gpu-tui provider login {provider}`, "
                    "or set {variable}"
                ).format(label=LABELS[provider], provider=provider, variable=token_env(provider))
            )
    return clients


def importable_providers(secrets: SecretStore) -> tuple[str, ...]:
    """The providers whose API token is stored (blocking: the keyring)."""
    return tuple(p for p in API_PROVIDERS if token_for(p, secrets) is not None)


async def import_accounts(providers: Iterable[str], settings: Settings, paths: Paths, secrets: SecretStore) -> str:
    """Import every instance of these accounts (the welcome screen's `i`); what was done. Every
    account is listed before anything is written, so a failure writes nothing."""
    listed: list[ProviderInstance] = []
    for provider in providers:
        token = token_for(provider, secrets)
        if token is not None:
            listed.extend(await client_for(provider, token).list_instances())
    plans = plan_import(listed, settings, (), all_=True)
    await asyncio.to_thread(write_import, paths.config_file, plans)
    return _("imported {count} instances into {path}").format(count=len(plans), path=paths.config_file)
