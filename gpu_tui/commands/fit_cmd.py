"""`gpu-tui fit MODEL [--dtype D] [--context N] [--batch N] [--train none|lora|full] [--json]`:
how much VRAM a model needs and which cards hold it (docs/FIT.md has the formulas).

Nothing here reaches an instance: the config's instances are listed with what is known of their
GPUs, which outside the dashboard is nothing (no command keeps a GPU list on this machine), and
that is said; the dashboard's Fit screen (`v`) checks the live fleet.
"""

from __future__ import annotations

import argparse
import json

from gpu_tui.commands import EXIT_OK
from gpu_tui.commands.cells import format_rows
from gpu_tui.config.paths import Paths
from gpu_tui.config.settings import Settings
from gpu_tui.core.errors import InputError
from gpu_tui.core.fit import (
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
)
from gpu_tui.core.fitmodels import MODELS
from gpu_tui.core.i18n import _
from gpu_tui.core.text import printable
from gpu_tui.core.units import MISSING, format_bytes, format_rate_per_hour
from gpu_tui.services.fitinput import parse_positive, resolve_model

__all__ = ["format_fit", "instance_cards", "run_fit"]


def instance_cards(settings: Settings) -> list[Card]:
    """The config's instances; their GPUs are unknown outside the dashboard (memory 0)."""
    return [Card("", 0, instance=i.name, rate=i.hourly_rate) for i in settings.instances]


def _gib(v: float | None) -> str:
    return MISSING if v is None else format_bytes(v * GIB)


def _verdict(f: CardFit, total: float) -> str:
    if f.fits is None:
        return _("GPUs not known here: the dashboard's Fit screen (v) checks the live fleet")
    spare = f.card.memory_gib - total
    if f.fits:
        return _("fits ({spare} spare)").format(spare=_gib(spare))
    return _("does not fit ({short} short)").format(short=_gib(-spare))


def _headline(est: Estimate) -> str:
    mode = {"none": _("inference"), "lora": _("LoRA fine-tuning"), "full": _("full fine-tuning")}[est.train]
    return _("{model}: {params}B parameters, {dtype}, {context} tokens x batch {batch}, {mode}").format(
        model=printable(est.model), params=f"{est.params_billion:.2f}", dtype=est.dtype,
        context=est.context, batch=est.batch, mode=mode)


def format_fit(est: Estimate, mine: list[CardFit], common: list[CardFit], currency: str) -> str:
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
        lines += format_rows([
            ("  " + printable(f.card.instance or ""),
             format_rate_per_hour(f.card.rate, currency) if f.card.rate else MISSING,
             f"{f.card.count}x {f.card.gpu}" if f.card.count > 1 else (f.card.gpu or MISSING),
             _verdict(f, est.total_gib))
            for f in mine
        ])
    lines.append(_("common cards:"))
    lines += format_rows([("  " + f.card.gpu, _verdict(f, est.total_gib)) for f in common])
    best = cheapest_fit(mine)
    if best is not None:
        lines.append(_("cheapest fitting card in your fleet: {name} ({gpu}, {rate})").format(
            name=printable(best.card.instance or ""), gpu=best.card.gpu,
            rate=format_rate_per_hour(best.card.rate, currency)))
    elif any(f.fits is None for f in mine):
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
    spec = resolve_model(args.model)
    context = parse_positive(args.context, "--context")
    batch = parse_positive(args.batch, "--batch")
    est = estimate(spec, args.dtype.strip().lower(), context, batch, args.train.strip().lower())
    mine = fit_cards(est, instance_cards(settings))
    common = fit_cards(est, COMMON_CARDS)
    if args.json:
        print(json.dumps(estimate_json(est, mine + common), ensure_ascii=False))
    else:
        print(format_fit(est, mine, common, settings.settings.currency))
    return EXIT_OK

