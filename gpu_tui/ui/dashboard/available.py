"""When each dashboard action can run, for the selected instance: the table the footer, help
and the palette are derived from (tied to core/actions.py by tests/ui/test_action_table.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.dashboard import instance_keys, job_keys, process_keys
from gpu_tui.ui.dashboard.shell import shell_possible

if TYPE_CHECKING:
    from gpu_tui.ui.dashboard.screen import DashboardScreen

__all__ = ["AVAILABLE", "FOR_LAB_NODES", "configured"]

Check = Callable[["DashboardScreen", InstanceView | None], bool | None]


def _online(_s: DashboardScreen, v: InstanceView | None) -> bool | None:
    return True if v is not None and v.state == "online" else None


def configured(s: DashboardScreen) -> bool:
    """Instances of the config file (not the demo, not this machine): add, edit and sync write
    or read that file."""
    return s.opened is not None and s.opened.onboarder is not None


def _sync(s: DashboardScreen, v: InstanceView | None) -> bool | None:
    # rsync's transport is a gpu-tui child that reads the config file
    if not (s.source.remote and configured(s)):
        return False
    return _online(s, v)


def _edit(s: DashboardScreen, v: InstanceView | None) -> bool | None:
    if not configured(s):
        return False
    return True if v is not None else None


def _trust_key(s: DashboardScreen, v: InstanceView | None) -> bool | None:
    if not s.source.remote:
        return False
    return True if v and v.shown_state in instance_keys.HOST_KEY_STATES and v.key_line else None


def _reconnect(s: DashboardScreen, v: InstanceView | None) -> bool | None:
    if not s.source.remote:
        return False
    return True if v and v.shown_state in instance_keys.RETRY_STATES else None


def _forward(s: DashboardScreen, v: InstanceView | None) -> bool | None:
    # the demo's simulated machines serve no ports; an offline one may still have forwards to close
    if not (s.source.remote and configured(s)):
        return False
    return True if v is not None and (v.state == "online" or s.forwards.count(v.name)) else None


AVAILABLE: dict[str, Check] = {
    "quit": lambda s, v: True,
    "help": lambda s, v: True,
    "detail": lambda s, v: True if v is not None else None,
    "run_job": lambda s, v: job_keys.job_check("run_job", v),
    "logs": lambda s, v: job_keys.job_check("logs", v),
    "stop_job": lambda s, v: job_keys.job_check("stop_job", v),
    "check": _online,
    "conda": _online,
    "sync": _sync,
    "shell": lambda s, v: shell_possible(s, v),
    "forward": _forward,
    "add": lambda s, v: configured(s),
    "edit": _edit,
    "cost": lambda s, v: s.opened is not None and s.opened.billing is not None,
    "shutdown": lambda s, v: s.power.check("shutdown", v),
    "shutdown_all": lambda s, v: s.power.check("shutdown_all", v),
    "trust_key": _trust_key,
    "reconnect": _reconnect,
    "fit": lambda s, v: True,
    "power_on": lambda s, v: s.starter.check(v),
    "sort": lambda s, v: True,
    "show_only": lambda s, v: True,
    "find": lambda s, v: True,
    "gpu_processes": lambda s, v: process_keys.processes_check(v),
}
"""When each action of the table can run: True, None (shown dimmed: not for this instance now)
or False (hidden: never here, e.g. power keys in the demo)."""

FOR_LAB_NODES = frozenset(
    {"quit", "help", "detail", "fit", "cost", "add", "reconnect", "shutdown_all", "sort", "show_only", "find"}
)
"""What a lab's node (its numbers from Prometheus, no login) leaves live; the rest is dimmed on it."""
