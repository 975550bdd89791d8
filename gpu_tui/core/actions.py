"""The dashboard's one action table: id, default key, footer label and help line.

Everything else is derived from it: the dashboard's bindings, the `[keys]` validation of the
config (which is why it lives in core: config must not import the UI), the help screen and the
command palette. When an action can run is the dashboard's business (its availability table,
tied to this one by a test).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_tui.core.i18n import N_

__all__ = ["ACTIONS", "ACTION_IDS", "Action", "action", "key_label"]


@dataclass(frozen=True, slots=True)
class Action:
    id: str
    """What users remap in `[keys]`; the dashboard's method is `action_<id>`."""
    key: str
    """The default key, in Textual's names (`question_mark`, `dollar_sign`, `S`)."""
    label: str
    """Short, for the footer and the palette (English, marked: `_()` it where shown)."""
    help: str
    """One line for the help screen (English, marked: `_()` it where shown)."""
    show: bool = True
    """In the footer (hidden ones are still bound, listed in help and the palette)."""


# In the order the footer shows them: at 80 columns only the first few fit.
ACTIONS: tuple[Action, ...] = (
    Action("quit", "q", N_("Quit"), N_("quit (asks while instances still bill)")),
    Action("help", "question_mark", N_("Help"), N_("every key")),
    Action("shutdown", "S", N_("Shut down"), N_("shut this instance down, verified")),
    Action("run_job", "r", N_("Run"), N_("run a job on the selected instance")),
    Action("logs", "l", N_("Logs"), N_("the newest job: log, loss curve, ETA")),
    Action("stop_job", "x", N_("Stop job"), N_("stop the running job (asks first)")),
    Action("cost", "dollar_sign", N_("Cost"), N_("cost: today, week, month, all time")),
    Action("check", "c", N_("Check"), N_("check driver, CUDA, conda, torch, disks")),
    Action("conda", "e", N_("Conda"), N_("conda envs: create, install, remove")),
    Action("sync", "y", N_("Sync"), N_("push or pull the sync directories")),
    Action("shell", "t", N_("Shell"), N_("a shell on the instance")),
    Action("forward", "f", N_("Ports"), N_("forward instance ports here: TensorBoard, Jupyter..."), show=False),
    Action("detail", "enter", N_("Detail"), N_("this instance's GPUs, larger charts")),
    Action("add", "a", N_("Add"), N_("add an instance (paste its login)")),
    Action("edit", "i", N_("Edit"), N_("edit this instance's settings")),
    Action("shutdown_all", "Q", N_("Shut all+quit"), N_("shut every billing one down, quit")),
    Action("trust_key", "K", N_("Trust key"), N_("trust an unknown or changed host key")),
    Action("reconnect", "R", N_("Reconnect"), N_("reconnect now (or type the password)")),
    # not in the footer (it is full at 120 columns): help and the palette list it
    Action("fit", "v", N_("Fit"), N_("VRAM fit: will a model fit this fleet's GPUs"), show=False),
    Action("power_on", "p", N_("Power on"), N_("power a stopped imported instance on (provider API)")),
    Action("sort", "o", N_("Sort"), N_("sort: config order, name, utilisation, idle GPUs, errors"), show=False),
    Action("show_only", "w", N_("Show"), N_("show only: all, with idle GPUs, with errors"), show=False),
    Action("gpu_processes", "P", N_("GPU procs"), N_("who holds each GPU's memory; end a process"), show=False),
    Action("find", "slash", N_("Find"), N_("show only the instances whose name holds a text"), show=False),
)

ACTION_IDS: tuple[str, ...] = tuple(a.id for a in ACTIONS)

_BY_ID = {a.id: a for a in ACTIONS}

_KEY_LABELS = {"question_mark": "?", "dollar_sign": "$", "slash": "/"}


def action(action_id: str) -> Action:
    """The table's entry for `action_id` (KeyError for an unknown one)."""
    return _BY_ID[action_id]


def key_label(key: str) -> str:
    """A Textual key name as a person types it (`question_mark` -> `?`)."""
    return ",".join(_KEY_LABELS.get(k, k) for k in key.split(","))
