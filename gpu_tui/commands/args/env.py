"""Arguments of `gpu-tui env` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse

from gpu_tui.core.i18n import _

__all__ = ["add_env_parser"]


def add_env_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    env = sub.add_parser("env", help=_("environment check: driver, CUDA, python, conda, torch, disks, memory"))
    env.add_argument("name", metavar="NAME", help=_("the instance to check"))
    env.add_argument("--json", action="store_true", help=_("print JSON (CONTRACTS.md)"))
    env.add_argument(
        "--env",
        dest="conda_env",
        metavar="ENV",
        help=_("check torch in this conda env (default: conda base, else python3)"),
    )
