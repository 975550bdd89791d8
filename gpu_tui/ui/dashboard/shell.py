"""The dashboard's `t`: a shell on the selected instance while the dashboard is suspended.

The shell is a child process, `python -m gpu_tui --config CFG ssh NAME`, so the terminal belongs
wholly to it (raw mode, resize, its exit code); the dashboard comes back when it exits. A
password typed in this session reaches the child only through `GPU_TUI_PASSWORD_<NAME>` in its
environment, never its argument list. Under `gpu-tui local` it is the user's $SHELL instead.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from pydantic import SecretStr
from textual.app import SuspendNotSupported

from gpu_tui.config.secrets import env_var_name
from gpu_tui.core.i18n import _
from gpu_tui.core.text import printable
from gpu_tui.services.fleet import InstanceView
from gpu_tui.ui.dashboard.context import DashboardContext

__all__ = ["SHELL_STATES", "shell_possible", "ssh_child", "local_shell", "open_shell"]

SHELL_STATES = ("online", "auth failed")
"""Where `t` is offered: online, or refused (the child then asks for the password itself)."""

Runner = Callable[..., "subprocess.CompletedProcess[bytes]"]


def shell_possible(ctx: DashboardContext, view: InstanceView | None) -> bool | None:
    """For `check_action`: True when `t` can run now, None (dimmed) when not for this instance
    now, False (hidden) in the demo, whose instances live inside this process."""
    if not ctx.source.remote:
        return True if view is not None else None
    if not ctx.source.config_path:
        return False
    return True if view is not None and view.state in SHELL_STATES else None


def ssh_child(
    config_path: str, name: str, password: SecretStr | None, environ: Mapping[str, str]
) -> tuple[list[str], dict[str, str]]:
    """argv and environment of the `gpu-tui ssh NAME` child: the password, if any, only in the env."""
    env = dict(environ)
    if password is not None:
        env[env_var_name(name)] = password.get_secret_value()
    return [sys.executable, "-m", "gpu_tui", "--config", config_path, "ssh", name], env


def local_shell(environ: Mapping[str, str]) -> list[str]:
    """The user's shell on this machine: $SHELL, else /bin/sh (%COMSPEC% on Windows)."""
    if os.name == "nt":
        return [environ.get("COMSPEC") or "cmd.exe"]
    return [environ.get("SHELL") or "/bin/sh"]


def _typed_password(ctx: DashboardContext, name: str) -> SecretStr | None:
    """The password this session holds in memory for the instance (typed after `R`)."""
    return ctx.opened.typed_password(name) if ctx.opened is not None else None


def _ignore(_signum: int, _frame: Any) -> None:
    pass


@contextlib.contextmanager
def _sigint_for_the_child() -> Iterator[None]:
    """Ctrl+C while the child runs (at a password prompt, say) reaches every process on the
    terminal: the dashboard must not die of it. A Python handler, not SIG_IGN, because the child
    gets default handling back at exec, and so its own KeyboardInterrupt."""
    try:
        previous = signal.signal(signal.SIGINT, _ignore)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def open_shell(ctx: DashboardContext, view: InstanceView, *, run: Runner = subprocess.run) -> None:
    """Suspend the dashboard, run the shell until it exits, resume; a failure (unreachable, host
    key, auth) is shown as a notification, since the dashboard repaints over the terminal."""
    name = view.name
    remote = ctx.source.remote
    if remote:
        if not ctx.source.config_path:
            ctx.notify(_("the demo's instances have no shell"), severity="warning")
            return
        argv, env = ssh_child(ctx.source.config_path, name, _typed_password(ctx, name), os.environ)
        where = name
    else:
        argv, env = local_shell(os.environ), dict(os.environ)
        where = _("this machine")
    try:
        with ctx.app.suspend(), _sigint_for_the_child():
            sys.stdout.write(
                "gpu-tui: " + _("shell on {where}; `exit` returns to the dashboard").format(where=where) + "\n"
            )
            sys.stdout.flush()
            # the ssh child's stderr carries only gpu-tui's own messages (the pty merges the remote's)
            result = run(argv, env=env, stderr=subprocess.PIPE if remote else None)
    except SuspendNotSupported:
        ctx.notify(_("a shell needs a real terminal; this one cannot be suspended"), severity="warning")
        return
    except OSError as exc:
        ctx.notify(
            _("cannot start {program}: {error}").format(program=argv[0], error=exc.strerror or exc),
            title=_("shell"),
            severity="error",
            markup=False,
        )
        return
    errors = (result.stderr or b"").decode("utf-8", "replace").strip().splitlines()
    if result.returncode != 0 and errors:
        ctx.notify(
            printable(errors[-1]),
            title=_("shell on {name}").format(name=name),
            severity="error",
            timeout=10,
            markup=False,
        )
