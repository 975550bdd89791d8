"""What services/monitor/holders.sh prints on a demo instance: its compute processes as the
instance sees them holding `/dev/nvidia<index>` (a named app's pid is its own; a host pid's is
the container's `AppSpec.holder`, or nobody's here); a running job owns a named one."""

from __future__ import annotations

from gpu_tui.demo.simulate import InstanceSim

__all__ = ["holders_text"]


def holders_text(sim: InstanceSim) -> str:
    lines = [f"d {g.index}" for g in sim.gpus]
    # the instance's running jobs own its named processes, in order (a job's pid leads its group)
    running = [j for _id, j in sorted(sim.jobs.jobs.items()) if j.alive]
    named = 0
    for app in sim.live_apps():
        group = None
        if app.name is not None:
            pid, command = app.pid, app.name
            if named < len(running):
                group = running[named]
                lines.append(f"j {group.pid} {group.id}")
            named += 1
        elif app.holder is not None:
            pid, command = app.holder
        else:
            continue
        pgrp = group.pid if group is not None else pid
        lines += [f"p {pid} 0 1 {pgrp} 100", f"c {pid} {command}", f"h {pid} {app.gpu}"]
    if len(lines) > len(sim.gpus):
        lines.append("u 0 root")
    return "".join(line + "\n" for line in lines)
