"""The dashboard's `t` (gpu_tui/ui/dashboard/shell.py): the child's argv and environment (a password only
ever in the env), where `t` is offered, and the suspend -> child -> resume path on real sshd.

Textual's headless test driver cannot suspend (`can_suspend` is False, so `App.suspend` raises
SuspendNotSupported): that refusal is tested as is; the child itself is tested with `suspend`
replaced by a no-op and the child's stdin fed by the test."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from pilothelp import state_of
from pydantic import SecretStr
from waiting import wait_for

from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore, env_var_name
from gpu_tui.config.settings import parse_settings
from gpu_tui.ui.dashboard.shell import local_shell, open_shell, shell_possible, ssh_child
from gpu_tui.ui.factory import build_app, config_source, demo_source, local_source

# ------------------------------------------------------------------------------ pure parts


def test_ssh_child_puts_the_password_in_the_env_only() -> None:
    base = {"PATH": "/usr/bin", "TERM": "xterm"}
    argv, env = ssh_child("/cfg/config.toml", "my-box.1", SecretStr("s3cret pw"), base)
    assert argv == [sys.executable, "-m", "gpu_tui", "--config", "/cfg/config.toml", "ssh", "my-box.1"]
    assert not any("s3cret" in word for word in argv)
    assert env[env_var_name("my-box.1")] == "s3cret pw" and env_var_name("my-box.1") == "GPU_TUI_PASSWORD_MY_BOX_1"
    assert env["TERM"] == "xterm" and base == {"PATH": "/usr/bin", "TERM": "xterm"}  # not mutated


def test_ssh_child_without_a_password_leaves_the_env_alone() -> None:
    base = {"PATH": "/usr/bin", "GPU_TUI_PASSWORD_BOX": "from-the-user"}
    argv, env = ssh_child("c.toml", "box", None, base)
    assert env == base and argv[-2:] == ["ssh", "box"]


def test_local_shell_is_the_users_shell() -> None:
    assert local_shell({"SHELL": "/usr/bin/fish"}) == ["/usr/bin/fish"]
    assert local_shell({}) == ["/bin/sh"]


def test_shell_is_hidden_in_the_demo_and_needs_a_selection() -> None:
    demo = SimpleNamespace(source=demo_source())
    assert shell_possible(demo, None) is False  # type: ignore[arg-type]
    local = SimpleNamespace(source=local_source())
    assert shell_possible(local, None) is None  # type: ignore[arg-type]
    assert shell_possible(local, SimpleNamespace(state="online")) is True  # type: ignore[arg-type]


# ------------------------------------------------------------------------------ with the dashboard


def dashboard(tmp: Path, config: str) -> Any:
    """A dashboard on `config` written to a real file (the child reads it), known hosts where the
    child looks for them (XDG_DATA_HOME, see child_env)."""
    cfg = tmp / "config.toml"
    cfg.write_text(config)
    settings = parse_settings(config)
    data = tmp / "xdg-data" / "gpu-tui"
    paths = Paths(cfg, data, tmp / "log", tmp / "no-ssh-config", tmp / "no-known-hosts")
    data.mkdir(parents=True, exist_ok=True)
    return build_app(config_source(settings, paths, SecretStore(environ={})), settings)


def child_env(tmp: Path, env: dict[str, str]) -> dict[str, str]:
    (tmp / "home").mkdir(exist_ok=True)
    return {
        **env,
        "HOME": str(tmp / "home"),
        "XDG_DATA_HOME": str(tmp / "xdg-data"),
        "XDG_STATE_HOME": str(tmp / "xdg-state"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }


class Runner:
    """Stands in for subprocess.run: records what open_shell asked, runs it with `stdin` fed."""

    def __init__(self, tmp: Path, stdin: bytes) -> None:
        self.tmp, self.stdin = tmp, stdin
        self.calls: list[tuple[list[str], dict[str, str]]] = []
        self.result: subprocess.CompletedProcess[bytes] | None = None

    def __call__(self, argv: list[str], *, env: dict[str, str], **kw: Any) -> subprocess.CompletedProcess[bytes]:
        self.calls.append((list(argv), dict(env)))
        self.result = subprocess.run(
            argv, env=child_env(self.tmp, env), input=self.stdin, stdout=subprocess.PIPE, timeout=60, **kw
        )
        return self.result


def notes(app: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    seen: list[str] = []
    monkeypatch.setattr(app, "notify", lambda message, **kw: seen.append(f"{kw.get('title', '')}: {message}"))
    return seen


def pw_config(inst: Any, user: str) -> str:
    return (
        "[settings]\nconnect_timeout_seconds = 2.0\nrefresh_seconds = 0.5\n\n[[instances]]\n"
        f'name = "pw-box"\nhost = "{inst.host}"\nport = {inst.port}\nuser = "{user}"\n'
    )


async def test_headless_driver_cannot_suspend_and_says_so(sshd_instance, tmp_path: Path, monkeypatch) -> None:
    from sshhelp import config_text

    app = dashboard(tmp_path, config_text([sshd_instance], connect_timeout=2.0))
    (tmp_path / "xdg-data" / "gpu-tui" / "known_hosts").write_text(sshd_instance.host_public_key_line + "\n")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: state_of(app, sshd_instance.name) == "online")
        seen = notes(app, monkeypatch)
        view = app.dashboard.selected()
        assert shell_possible(app.dashboard, view) is True
        runner = Runner(tmp_path, b"")
        open_shell(app.dashboard, view, run=runner)
        assert runner.calls == []
        assert seen and "real terminal" in seen[0]


async def test_typed_password_reaches_the_child_through_the_env(
    sshd_instance, password_user, tmp_path: Path, monkeypatch
) -> None:
    app = dashboard(tmp_path, pw_config(sshd_instance, password_user.name))
    (tmp_path / "xdg-data" / "gpu-tui" / "known_hosts").write_text(sshd_instance.host_public_key_line + "\n")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: state_of(app, "pw-box") == "auth failed")
        seen = notes(app, monkeypatch)
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
        view = app.dashboard.selected()
        assert shell_possible(app.dashboard, view) is True  # the child asks for the password itself

        # nothing typed yet: the child is refused too, and the dashboard says why
        refused = Runner(tmp_path, b"echo never\n")
        open_shell(app.dashboard, view, run=refused)
        assert refused.result is not None and refused.result.returncode == 3
        assert seen and "auth failed" in seen[-1]

        # typed in this session (what `R` does), then `t`
        typed = SecretStr(password_user.password)
        app.opened.use_password("pw-box", typed)
        monkeypatch.setattr(app.opened, "typed_password", lambda name: typed if name == "pw-box" else None)
        seen.clear()
        runner = Runner(tmp_path, b"echo via-$(whoami)\n")
        open_shell(app.dashboard, view, run=runner)
        ((argv, env),) = runner.calls
        assert password_user.password not in " ".join(argv)
        assert env[env_var_name("pw-box")] == password_user.password
        assert runner.result is not None and runner.result.returncode == 0, runner.result
        assert f"via-{password_user.name}".encode() in runner.result.stdout
        assert seen == []


def test_local_mode_runs_the_users_shell(tmp_path: Path, monkeypatch) -> None:
    # the parts of the app open_shell uses (a local dashboard's shutdown can hang in JobWatcher:
    # reported, not this test's subject)
    monkeypatch.setenv("SHELL", "/bin/sh")
    seen: list[str] = []
    ctx = SimpleNamespace(
        source=local_source(),
        opened=None,
        app=SimpleNamespace(suspend=contextlib.nullcontext),
        notify=lambda message, **kw: seen.append(message),
    )
    runner = Runner(tmp_path, b"echo local-$((6*7)); exit 4\n")
    open_shell(ctx, SimpleNamespace(name="vm", state="online"), run=runner)  # type: ignore[arg-type]
    ((argv, env),) = runner.calls
    assert argv == ["/bin/sh"] and env["SHELL"] == "/bin/sh"
    assert runner.result is not None and runner.result.returncode == 4
    assert b"local-42" in runner.result.stdout
    assert seen == []  # a shell's own exit code is no error of ours
    monkeypatch.setenv("SHELL", str(tmp_path / "no-such-shell"))
    open_shell(ctx, SimpleNamespace(name="vm", state="online"), run=subprocess.run)  # type: ignore[arg-type]
    assert seen and "cannot start" in seen[0]


def test_sigint_handler_is_restored(monkeypatch) -> None:
    import signal

    from gpu_tui.ui.dashboard import shell

    before = signal.getsignal(signal.SIGINT)
    with shell._sigint_for_the_child():
        assert signal.getsignal(signal.SIGINT) is shell._ignore
        signal.raise_signal(signal.SIGINT)  # this thread: handled before the block ends
        time.sleep(0.05)  # no KeyboardInterrupt here
    assert signal.getsignal(signal.SIGINT) is before
