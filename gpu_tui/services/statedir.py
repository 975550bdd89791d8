"""Where gpu-tui keeps its files on an instance (`state_dir`: jobs, shipped scripts, the
watchdog), as the remote shell reads it. Jobs, the watch loop and autostop build on it."""

from __future__ import annotations

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.remote.quoting import remote_path

__all__ = ["shell_state_dir"]


def shell_state_dir(inst: InstanceConfig) -> str:
    """The state dir as one shell word (a leading ~/ becomes "$HOME"/)."""
    return remote_path(inst.state_dir.rstrip("/") or "/")
