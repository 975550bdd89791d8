"""Arguments of `gpu-tui ssh-config` and `gpu-tui code` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse
from typing import Any

from gpu_tui.core.i18n import _

__all__ = ["add_sshconfig_parsers"]


def add_sshconfig_parsers(sub: argparse._SubParsersAction[Any]) -> None:
    cfg = sub.add_parser(
        "ssh-config", help=_("keep Host blocks for the instances in ~/.ssh/config (ssh, VS Code, PyCharm)")
    )
    cfg.add_argument(
        "names", nargs="*", metavar="NAME", help=_("instances (default: all; the section then holds exactly them)")
    )
    what = cfg.add_mutually_exclusive_group()
    what.add_argument("--print", dest="print_only", action="store_true", help=_("print the blocks, write nothing"))
    what.add_argument(
        "--remove",
        action="store_true",
        help=_("take the section (or the named instances' blocks) out of ~/.ssh/config"),
    )
    cfg.add_argument(
        "--install-key", action="store_true", help=_("install gpu-tui's key on password-only instances without asking")
    )
    code = sub.add_parser("code", help=_("open VS Code (Remote-SSH) on an instance"))
    code.add_argument("name", metavar="NAME", help=_("the instance"))
    code.add_argument(
        "path", nargs="?", metavar="PATH", help=_("folder to open on the instance (default: its workdir)")
    )
