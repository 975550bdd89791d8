"""Arguments of `gpu-tui kill` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse
from typing import Any

from gpu_tui.core.i18n import _

__all__ = ["add_kill_parser"]


def _pid(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or not 0 < int(text) < 2**31:
        raise argparse.ArgumentTypeError(_("PID wants a process id (a whole number), got {text!r}").format(text=text))
    return int(text)


def add_kill_parser(sub: argparse._SubParsersAction[Any]) -> None:
    kill = sub.add_parser(
        "kill",
        help=_("end a process that holds GPU memory: SIGINT, then SIGTERM, then SIGKILL (a job's: its stop)"),
    )
    kill.add_argument("name", metavar="NAME", help=_("the instance"))
    kill.add_argument("pid", metavar="PID", type=_pid, help=_("the process id as the instance sees it (status --json)"))
    kill.add_argument("--yes", action="store_true", help=_("do not ask first"))
