"""The selected instance's GPUs: one compact row each, utilisation 0-100 and VRAM 0-total histories."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from gpu_tui.core.text import printable
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.format import duration, gpu_row, state_text

__all__ = ["GpuPanel"]

FIXED_COLUMNS = 50  # everything on a GPU row except the two sparklines


class GpuPanel(Static):
    DEFAULT_CSS = """
    GpuPanel { height: auto; padding: 0 1; border-top: solid $primary-darken-2; }
    """

    show_address = True

    def render_view(self, v: InstanceView | None, now: float) -> Text:
        if v is None:
            return Text("no instance selected", style="dim")
        t = Text()
        t.append(v.name, style="bold")
        if v.config.host == "localhost":
            where = "this machine"
        elif not self.show_address:
            where = f"simulated, {v.config.provider}"
        else:
            where = f"{v.config.user}@{v.config.host}:{v.config.port}"
        t.append(f"  {where}  ", style="dim")
        t.append_text(state_text(v, now))
        up = v.uptime_seconds(now)
        if up is not None:
            t.append(f"  up {duration(up)}", style="dim")
        if v.message and v.state != "online":
            t.append("\n" + printable(v.message), style="red")
        if v.state == "host key changed":
            t.append("\npress K to compare fingerprints and re-trust if you expected this", style="yellow")
        elif v.state == "unknown host key":
            t.append("\npress K to check the fingerprint and trust it", style="yellow")
        elif v.state in ("offline", "auth failed"):
            t.append("\npress R to reconnect now", style="dim")
        if v.gpu_error is not None:
            t.append(f"\ngpu error: {printable(v.gpu_error.reason)}", style="magenta")
        frame = v.frame
        if frame is None or v.state != "online":
            if v.state == "online" and v.gpu_error is None:
                t.append("\nwaiting for the first sample…", style="dim")
            return t
        spark_w = max(4, (self.size.width - 2 - FIXED_COLUMNS) // 2)
        for g in frame.gpus:
            hist = v.history.gpus.get(g.index)
            util = list(hist.utilization) if hist else []
            mem = list(hist.memory_used_mib) if hist else []
            t.append("\n")
            t.append_text(gpu_row(g, util, mem, spark_w))
        return t

    def show(self, v: InstanceView | None, now: float) -> None:
        self.update(self.render_view(v, now))
