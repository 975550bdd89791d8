"""`gpu-tui fit MODEL [--dtype D] [--context N] [--batch N] [--train none|lora|full] [--probe] [--json]`:
how much VRAM a model needs and which cards hold it (docs/FIT.md has the formulas).

The config's instances are checked against the GPUs they last reported to `fit --probe`
(services/gpucache.py); no other command keeps a GPU list on this machine (the ledger holds
billing time only), so until a probe the instances are listed as not known, and that is said.
`--probe` asks them all in parallel first, as `status` does (and records their uptime in the
ledger, as every command that reaches an instance does).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

from gpu_tui.commands import EXIT_OK, EXIT_PARTIAL
from gpu_tui.commands.support.cells import format_rows
from gpu_tui.config.paths import Paths
from gpu_tui.config.settings import Settings
from gpu_tui.core.errors import InputError
from gpu_tui.core.fit.estimate import (
    COMMON_CARDS,
    GIB,
    Card,
    CardFit,
    Estimate,
    breakdown,
    cheapest_fit,
    count_params,
    estimate,
    estimate_json,
    fit_cards,
    instance_card,
)
from gpu_tui.core.fit.models import MODELS
from gpu_tui.core.i18n import _
from gpu_tui.core.text import printable
from gpu_tui.core.units import MISSING, format_ago_s, format_bytes, format_rate_per_hour
from gpu_tui.services.fitinput import parse_positive, resolve_model
from gpu_tui.services.gpucache import SeenGpus, cache_file, load_gpus, save_gpus

__all__ = ["format_fit", "instance_cards", "run_fit"]


def instance_cards(settings: Settings, seen: dict[str, SeenGpus]) -> list[Card]:
    """The config's instances with their last reported GPUs (memory 0: never reported)."""
    cards = []
    for i in settings.instances:
        s = seen.get(i.name)
        if s is None:
            cards.append(Card("", 0, instance=i.name, rate=i.hourly_rate))
        else:
            cards.append(
                Card(s.gpu, s.memory_mib, instance=i.name, rate=i.hourly_rate, count=s.count, seen_at=s.seen_at)
            )
    return cards


def _probe(settings: Settings, paths: Paths) -> tuple[dict[str, SeenGpus], list[str]]:
    """Ask every instance for its GPUs, in parallel; (what was seen, one line per failure)."""
    from gpu_tui.commands.status_cmd import record_uptimes
    from gpu_tui.config.secrets import SecretStore
    from gpu_tui.services.hosts import build_ssh_host
    from gpu_tui.services.status import collect_status

    secrets = SecretStore()
    hosts = [(build_ssh_host(i, settings, paths, secrets), i.hourly_rate) for i in settings.instances]
    statuses = asyncio.run(collect_status(hosts, overall_timeout=settings.settings.connect_timeout_seconds + 20))
    record_uptimes(statuses, paths, settings.instances)
    now, seen, failed = time.time(), dict[str, SeenGpus](), []
    for st in statuses:
        card = instance_card(st.name, st.hourly_rate, st.gpus)
        if card.memory_mib > 0:
            seen[st.name] = SeenGpus(card.gpu, card.memory_mib, card.count, now)
        elif not st.online:
            failed.append(f"{st.name}: {printable(st.error or _('failed'))}")
        elif st.gpu_error is not None:
            failed.append(f"{st.name}: " + _("gpu error: {reason}").format(reason=printable(st.gpu_error.reason)))
        else:
            failed.append(f"{st.name}: " + _("no GPU reported its memory"))
    if seen and not save_gpus(cache_file(paths.data_dir), seen):
        failed.append(_("could not remember the GPUs in {path} (see the log)").format(path=cache_file(paths.data_dir)))
    return seen, failed


def _gib(v: float | None) -> str:
    return MISSING if v is None else format_bytes(v * GIB)


def _verdict(f: CardFit, total: float, now: float) -> str:
    if f.fits is None:
        return _("GPUs not known yet: `gpu-tui fit --probe` asks, the dashboard's Fit screen (v) checks live")
    spare = f.card.memory_gib - total
    text = (
        _("fits ({spare} spare)").format(spare=_gib(spare))
        if f.fits
        else _("does not fit ({short} short)").format(short=_gib(-spare))
    )
    if f.card.seen_at is not None:
        text += "  " + _("(GPUs seen {ago})").format(ago=format_ago_s(now - f.card.seen_at))
    return text


def _headline(est: Estimate) -> str:
    mode = {"none": _("inference"), "lora": _("LoRA fine-tuning"), "full": _("full fine-tuning")}[est.train]
    return _("{model}: {params}B parameters, {dtype}, {context} tokens x batch {batch}, {mode}").format(
        model=printable(est.model),
        params=f"{est.params_billion:.2f}",
        dtype=est.dtype,
        context=est.context,
        batch=est.batch,
        mode=mode,
    )


def format_fit(est: Estimate, mine: list[CardFit], common: list[CardFit], currency: str, now: float) -> str:
    lines = [_headline(est)]
    rows = [("  " + _(label), _gib(v)) for label, v in breakdown(est)]
    rows.append(("  " + _("total"), _gib(est.total_gib)))
    lines += format_rows(rows, right=(1,))
    lines += ["  " + _(note) for note in est.notes]
    lines.append("")
    lines.append(_("your instances:"))
    if not mine:
        lines.append("  " + _("none configured (`gpu-tui add`)"))
    else:
        lines += format_rows(
            [
                (
                    "  " + printable(f.card.instance or ""),
                    format_rate_per_hour(f.card.rate, currency) if f.card.rate else MISSING,
                    (f"{f.card.count}x " if f.card.count > 1 else "") + printable(f.card.gpu)
                    if f.card.gpu
                    else MISSING,
                    _verdict(f, est.total_gib, now),
                )
                for f in mine
            ],
            right=(1,),
        )
    lines.append(_("common cards:"))
    lines += format_rows([("  " + f.card.gpu, _verdict(f, est.total_gib, now)) for f in common])
    best = cheapest_fit(mine)
    if best is not None:
        lines.append(
            _("cheapest fitting card in your fleet: {name} ({gpu}, {rate})").format(
                name=printable(best.card.instance or ""),
                gpu=printable(best.card.gpu),
                rate=format_rate_per_hour(best.card.rate, currency),
            )
        )
    elif mine and all(f.fits is None for f in mine):
        lines.append(_("cheapest fitting card in your fleet: not known (no GPUs known here)"))
    elif mine:
        lines.append(_("none of your instances' cards holds it on one GPU"))
    return "\n".join(lines)


def _model_list() -> str:
    rows = [(m.name, f"{count_params(m.shape) / 1e9:.2f}B", m.hf_id) for m in MODELS]
    return "\n".join(format_rows(rows, right=(1,)))


def run_fit(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    if args.list:
        print(_model_list())
        return EXIT_OK
    if not args.model:
        raise InputError(_("fit needs MODEL: a size like 7b, a config.json path, or a name from `gpu-tui fit --list`"))
    # every input is checked before any instance is asked
    spec = resolve_model(args.model)
    context = parse_positive(args.context, "--context")
    batch = parse_positive(args.batch, "--batch")
    est = estimate(spec, args.dtype.strip().lower(), context, batch, args.train.strip().lower())
    failed: list[str] = []
    if args.probe and settings.instances:
        failed = _probe(settings, paths)[1]
    mine = fit_cards(est, instance_cards(settings, load_gpus(cache_file(paths.data_dir))))
    common = fit_cards(est, COMMON_CARDS)
    if args.json:
        print(json.dumps(estimate_json(est, mine + common), ensure_ascii=False))
    else:
        print(format_fit(est, mine, common, settings.settings.currency, time.time()))
    for line in failed:
        sys.stderr.write(f"gpu-tui: {line}\n")
    return EXIT_PARTIAL if failed else EXIT_OK
