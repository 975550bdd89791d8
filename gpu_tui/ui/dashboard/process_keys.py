"""The dashboard's GPU processes key (`P`): every process that holds a GPU on the selected
instance, and ending one that holds memory someone needs (issue 27).

The list is what the dashboard knows (the watch loop's scan joined with the driver's list); the
end is checked on the instance first (services/monitor/freegpu.py): the pid must still be the
same process and hold a GPU, or nothing is signalled.
"""

from __future__ import annotations

from rich.text import Text

from gpu_tui.core.errors import GpuTuiError
from gpu_tui.core.i18n import _
from gpu_tui.core.metrics.holders import GpuHolderRow
from gpu_tui.core.text import printable
from gpu_tui.services.fleet import InstanceView
from gpu_tui.services.monitor.freegpu import Target, free_gpu, pick_target, read_holders
from gpu_tui.ui.dashboard.context import DashboardContext
from gpu_tui.ui.format import process_line
from gpu_tui.ui.screens.confirm import ConfirmScreen
from gpu_tui.ui.screens.pick import PickScreen

__all__ = ["processes_check", "open_processes"]


def processes_check(view: InstanceView | None) -> bool | None:
    """True where the selected instance has GPU processes to list; None (dimmed) otherwise."""
    if view is None or not view.ours or view.state != "online":
        return None
    return True if view.attribution().rows else None


def open_processes(ctx: DashboardContext, view: InstanceView) -> None:
    rows = {str(r.pid if r.pid is not None else f"host:{r.host_pid}"): r for r in view.attribution().rows}
    if not rows:
        return
    title = _("GPU processes on {name} (enter: end one; escape: back)").format(name=view.name)
    names = {j.id: j.name for j in view.jobs if j.name}
    entries = [(process_line(r, names).plain, key) for key, r in rows.items()]

    def chosen(key: str | None) -> None:
        row = rows.get(key or "")
        if row is not None:
            end_process(ctx, view, row)

    ctx.push(PickScreen(title, entries), chosen)


def end_process(ctx: DashboardContext, view: InstanceView, row: GpuHolderRow) -> None:
    """Ask, then end the process (its job's stop where it is a gpu-tui job's)."""
    fleet = ctx.fleet
    if fleet is None:
        return
    if row.pid is None:
        why = _(
            "{name}: host pid {pid} is not a process of this instance (another container's): "
            "it cannot be ended from here"
        )
        ctx.notify(printable(why.format(name=view.name, pid=row.host_pid)), severity="warning", markup=False)
        return
    pid, host, inst = row.pid, fleet.hosts[view.name], view.config
    seen = Target(pid, tuple(r for r in view.attribution().rows if r.pid == pid), None)
    question = Text.assemble(
        (seen.question(view.name), "bold"),
        "\n",
        (_("It gets SIGINT, then SIGTERM, then SIGKILL, only while it is still the same process."), "dim"),
    )

    async def end() -> None:
        try:
            att, scan = await read_holders(host, inst)
            target = pick_target(inst.name, att, scan, pid)
            how = await free_gpu(host, inst, target)
        except GpuTuiError as exc:
            ctx.notify(printable(exc.message), title=_(exc.title), severity="error", markup=False)
            return
        if target.job is not None:
            fleet.poke_jobs(view.name)
        word = how.partition(" ")[2]
        done = _("{name}: pid {pid} ended (SIG{signal})") if word else _("{name}: pid {pid} had already ended")
        ctx.notify(printable(done.format(name=view.name, pid=pid, signal=word)), markup=False)

    def answered(yes: bool | None) -> None:
        if yes:
            ctx.notify(printable(_("{name}: ending pid {pid}…").format(name=view.name, pid=pid)), markup=False)
            ctx.start(end(), group="end-process")

    ctx.push(ConfirmScreen(question, yes=_("End it")), answered)
