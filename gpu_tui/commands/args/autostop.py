"""Arguments of `gpu-tui autostop` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from gpu_tui.core.durations import parse_duration
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _

__all__ = ["add_autostop_parser", "duration_arg"]


def duration_arg(option: str) -> Callable[[str], int]:
    """An argparse `type` for durations: a bad one is a usage error (exit 2) naming the option."""

    def parse(text: str) -> int:
        try:
            return parse_duration(text, what=option)
        except InputError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    parse.__name__ = "duration"
    return parse


def _cores(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(_("--cpu-cores wants a number, got {text!r}").format(text=text)) from None
    if not 0.01 <= value <= 100000:
        raise argparse.ArgumentTypeError(_("--cpu-cores must be 0.01 or more"))
    return value


def add_autostop_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "autostop",
        help=_("arm (or cancel) a watchdog ON the instance that shuts it down once idle"),
        description=_(
            "Idle = no gpu-tui job running (or the --after-job one ended), every GPU under "
            "settings.idle_util_percent, and the CPU under half a core. The watchdog runs on the "
            "instance, so it works with the laptop closed; it logs to <state_dir>/autostop.log."
        ),
    )
    p.add_argument("name", metavar="NAME", help=_("the instance to watch"))
    p.add_argument(
        "--idle",
        type=duration_arg("--idle"),
        metavar="DURATION",
        help=_("how long it must stay idle: 30s, 15m, 1h, 1h30m (default: settings.idle_minutes)"),
    )
    p.add_argument(
        "--after-job",
        metavar="JOB",
        help=_("wait for this job (id or name) to end; other jobs then do not keep the instance up"),
    )
    p.add_argument(
        "--before",
        metavar="CMD",
        help=_("a shell command run once before the shutdown, e.g. 'cp -r out /root/autodl-fs/'"),
    )
    p.add_argument(
        "--before-timeout",
        type=duration_arg("--before-timeout"),
        metavar="DURATION",
        help=_("stop the --before command after this long and shut down anyway (default 10m)"),
    )
    p.add_argument("--cancel", action="store_true", help=_("disarm"))
    p.add_argument("--status", action="store_true", help=_("show whether it is armed and how long until it fires"))
    # for tests and benchmarks: seconds between checks, and the CPU use (in cores) that counts as busy
    p.add_argument("--check-every", type=duration_arg("--check-every"), help=argparse.SUPPRESS)
    p.add_argument("--cpu-cores", type=_cores, help=argparse.SUPPRESS)
