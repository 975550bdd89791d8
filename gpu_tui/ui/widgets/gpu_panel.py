"""The selected instance's GPUs: one compact row each, utilisation 0-100 and VRAM 0-total histories."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from gpu_tui.core.i18n import _
from gpu_tui.core.models import GpuErrorKind
from gpu_tui.core.text import printable
from gpu_tui.core.units import format_duration_s
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.format import gpu_row, spark_width, state_text
from gpu_tui.ui.widgets.text_panel import TextPanel

__all__ = ["GpuPanel"]


class GpuPanel(TextPanel):
    DEFAULT_CSS = """
    GpuPanel { height: auto; padding: 0 1; border-top: solid $primary-darken-2; }
    """

    show_address = True
    asks_password = False
    """True when `reconnect` on an `auth failed` instance asks for the password."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.keys: dict[str, str] = {"reconnect": "R", "trust_key": "K"}
        """Action id -> the key shown in hints; the app passes the user's remaps."""

    def render_view(self, v: InstanceView | None, now: float) -> Text:
        if v is None:
            return Text(_("no instance selected"), style="dim")
        t = Text()
        t.append(v.name, style="bold")
        if not v.ours:  # a lab's node: where its numbers come from, no login address
            where = v.source
        elif v.config.host == "localhost":
            where = _("this machine")
        elif not self.show_address:
            where = _("simulated, {provider}").format(provider=v.config.provider)
        else:
            where = f"{v.config.user}@{v.config.host}:{v.config.port}"
        if v.ours and v.gpus_from is not None:  # one of a lab's nodes too: its GPU numbers are the lab's
            where += "  " + _("GPUs from {source}").format(source=v.gpus_from)
        t.append(f"  {where}  ", style="dim")
        t.append_text(state_text(v, now))
        up = v.uptime_seconds(now)
        if up is not None:
            t.append("  " + _("up {uptime}").format(uptime=format_duration_s(up)), style="dim")
        if v.message and v.state != "online":
            message = v.message
            if not self.show_address:  # the demo's loopback ports mean nothing and change every run
                message = message.replace(f"{v.config.host}:{v.config.port}", v.name)
            t.append("\n" + printable(message), style="red")
        trust, retry = self.keys["trust_key"], self.keys["reconnect"]
        if v.state == "host key changed":
            line = _("press {key} to compare fingerprints and re-trust if you expected this").format(key=trust)
            t.append("\n" + line, style="yellow")
        elif v.state == "unknown host key":
            t.append("\n" + _("press {key} to check the fingerprint and trust it").format(key=trust), style="yellow")
        elif v.state == "auth failed" and self.asks_password:
            t.append("\n" + _("press {key} to type the password").format(key=retry), style="yellow")
        elif v.state in ("offline", "auth failed"):
            t.append("\n" + _("press {key} to reconnect now").format(key=retry), style="dim")
        if v.gpu_error is not None and v.gpu_error.kind is GpuErrorKind.NO_JOB:
            t.append("\n" + printable(v.gpu_error.reason), style="dim")
        elif v.gpu_error is not None:
            t.append("\n" + _("gpu error: {reason}").format(reason=printable(v.gpu_error.reason)), style="magenta")
        frame = v.frame
        if frame is None or v.state != "online":
            if v.state == "online" and v.gpu_error is None:
                t.append("\n" + _("waiting for the first sample…"), style="dim")
            return t
        spark_w, tail_w = spark_width(frame.gpus, self.size.width - 2)  # 2: padding
        for g in frame.gpus:
            hist = v.history.gpus.get(g.index)
            util = list(hist.utilization) if hist else []
            mem = list(hist.memory_used_mib) if hist else []
            t.append("\n")
            t.append_text(gpu_row(g, util, mem, spark_w, tail_w))
        return t

    def show(self, v: InstanceView | None, now: float) -> None:
        self.set_text(self.render_view(v, now))
