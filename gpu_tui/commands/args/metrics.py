"""Arguments of `gpu-tui metrics` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse
from typing import Any

from gpu_tui.core.i18n import _

__all__ = ["add_metrics_parser"]


def add_metrics_parser(sub: argparse._SubParsersAction[Any]) -> None:
    metrics = sub.add_parser("metrics", help=_("every series a job logged: loss, eval loss, learning rate..."))
    metrics.add_argument("name", metavar="NAME", help=_("the instance"))
    metrics.add_argument("job", metavar="JOB", help=_("the job's id, or its name (the newest job of that name)"))
    metrics.add_argument("--tag", metavar="TAG", help=_("only this series (e.g. loss, eval_loss, learning_rate)"))
    metrics.add_argument("--json", action="store_true", help=_("print JSON with every point (CONTRACTS.md)"))
