"""Arguments of `gpu-tui ssh` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse

from gpu_tui.core.i18n import _

__all__ = ["add_ssh_parser"]


def add_ssh_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ssh = sub.add_parser("ssh", help=_("a shell on an instance, or one command (exit code = the command's)"))
    ssh.add_argument("name", metavar="NAME", help=_("the instance"))
    ssh.add_argument(
        "-t",
        dest="tty",
        action="store_true",
        help=_("run the command on a pty, for full-screen or interactive programs (top, a python prompt)"),
    )
    # the words after `--` are put in args.cmd by cli.parse_args; None = an interactive shell
    ssh.set_defaults(cmd=None)
    ssh.usage = "gpu-tui ssh NAME [-t] [-- CMD...]"
