"""Arguments of `gpu-tui fit` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse
from typing import Any

from gpu_tui.core.i18n import _

__all__ = ["add_fit_parser"]


def add_fit_parser(sub: argparse._SubParsersAction[Any]) -> None:
    fit = sub.add_parser("fit", help=_("will a model fit in VRAM: weights, KV cache, training, which GPUs"))
    fit.add_argument(
        "model",
        nargs="?",
        metavar="MODEL",
        help=_("a size (7b, 0.5b, 72b), a config.json path, or a known name (see --list)"),
    )
    # dtype, train, context and batch are checked by the command, so a bad one is one line
    fit.add_argument(
        "--dtype", default="bf16", metavar="fp32|bf16|fp16|int8|int4", help=_("weight precision (default: bf16)")
    )
    fit.add_argument("--context", default="4096", metavar="N", help=_("tokens per sequence (default: 4096)"))
    fit.add_argument("--batch", default="1", metavar="N", help=_("sequences at once (default: 1)"))
    fit.add_argument(
        "--train",
        default="none",
        metavar="none|lora|full",
        help=_("none: serve it; lora or full: fine-tune with Adam (default: none)"),
    )
    fit.add_argument(
        "--probe",
        action="store_true",
        help=_("ask every instance for its GPUs first (as status does) and remember them"),
    )
    fit.add_argument("--json", action="store_true", help=_("print JSON (CONTRACTS.md) instead of text"))
    fit.add_argument("--list", action="store_true", help=_("list the models known by name, then exit"))
