"""How commands reach a machine: SSH (asyncssh) or a local subprocess, behind one `Host` interface."""

from gpu_tui.remote.host import CommandResult, Host, LineStream
from gpu_tui.remote.local import LocalHost
from gpu_tui.remote.ssh import SshHost

__all__ = ["CommandResult", "Host", "LineStream", "LocalHost", "SshHost"]
