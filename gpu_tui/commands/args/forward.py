"""Arguments of `gpu-tui forward` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse
from typing import Any

from gpu_tui.core.forwardspec import DEFAULT_BIND, ForwardSpec, parse_spec
from gpu_tui.core.i18n import _

__all__ = ["add_forward_parser"]


def _spec(text: str) -> ForwardSpec:
    try:
        return parse_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_forward_parser(sub: Any) -> None:
    """`sub`: the program's subparsers (argparse._SubParsersAction, private, so not named)."""
    fw = sub.add_parser(
        "forward",
        help=_("forward instance ports to this machine over gpu-tui's SSH connection, until Ctrl+C"),
    )
    fw.add_argument("name", metavar="NAME", help=_("the instance"))
    fw.add_argument(
        "specs",
        nargs="+",
        type=_spec,
        metavar="PORT[:LOCAL]",
        help=_("the instance's port, and the local one (default: the same; 0: any free one)"),
    )
    fw.add_argument(
        "--bind",
        default=DEFAULT_BIND,
        metavar="ADDR",
        help=_("the local address to listen on (default: {bind}, this machine only)").format(bind=DEFAULT_BIND),
    )
    fw.usage = "gpu-tui forward NAME PORT[:LOCAL]... [--bind ADDR]"
