"""`gpu-tui ssh-config` and `gpu-tui code` against a real sshd: the section in ~/.ssh/config is
written, updated and removed around the user's own entries, and OpenSSH's own client logs in
with it non-interactively (BatchMode), trusting exactly the host keys gpu-tui trusts."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from sshhelp import cli_env, config_text, run_gpu_tui

from gpu_tui.config.secrets import env_var_name
from gpu_tui.core.sshsection import BEGIN, blocks_in

pytestmark = pytest.mark.sshd

USER_CONFIG = """# my laptop's ssh config: gpu-tui must keep this comment
Host *
    User alice
    ServerAliveInterval 30

Host lab  # the lab box
    HostName 10.1.2.3
    Port 2200
"""


def ssh_config(tmp: Path) -> Path:
    return tmp / "home" / ".ssh" / "config"


def openssh(tmp: Path, alias: str, *command: str) -> subprocess.CompletedProcess[str]:
    """OpenSSH's client with only that file: no agent, no prompt."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp / "home")}
    return subprocess.run(
        ["ssh", "-F", str(ssh_config(tmp)), "-o", "BatchMode=yes", "-o", "ConnectTimeout=5", alias, *command],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        stdin=subprocess.DEVNULL,
    )


def test_written_updated_removed_and_openssh_logs_in(sshd_instance, tmp_path: Path) -> None:
    assert shutil.which("ssh"), "the OpenSSH client is needed"
    cfg = ssh_config(tmp_path)
    cfg.parent.mkdir(parents=True)
    cfg.write_text(USER_CONFIG)
    name = sshd_instance.name

    shown = run_gpu_tui(tmp_path, [sshd_instance], "ssh-config", "--print")
    assert shown.returncode == 0, shown.stderr
    assert f"Host {name}" in shown.stdout and cfg.read_text() == USER_CONFIG  # --print writes nothing

    res = run_gpu_tui(tmp_path, [sshd_instance], "ssh-config")
    assert res.returncode == 0, res.stderr
    text = cfg.read_text()
    assert text.startswith(BEGIN + "\n") and text.endswith("\n" + USER_CONFIG)
    assert stat.S_IMODE(cfg.stat().st_mode) == 0o600
    block = blocks_in(text)[name]
    assert f"    Port {sshd_instance.port}" in block and f"    IdentityFile {sshd_instance.client_key_path}" in block
    app_known = tmp_path / "xdg-data" / "gpu-tui" / "known_hosts"
    assert f"    UserKnownHostsFile {tmp_path / 'home' / '.ssh' / 'known_hosts'} {app_known}" in block

    # OpenSSH itself, with that file: the user's `Host * / User alice` above does not win
    login = openssh(tmp_path, name, "id -un; echo $HOME")
    assert login.returncode == 0, login.stderr
    assert login.stdout.splitlines()[0] == "root"
    assert login.stdout.splitlines()[1] == str(sshd_instance.home())

    # a host key gpu-tui has not accepted is refused by OpenSSH too
    app_known.write_text("")
    refused = openssh(tmp_path, name, "true")
    assert refused.returncode == 255 and "Host key verification failed" in refused.stderr

    # update: the port moved; one block, rewritten in place
    moved = config_text([sshd_instance]).replace(f"port = {sshd_instance.port}", "port = 2")
    (tmp_path / "moved.toml").write_text(moved)
    again = subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(tmp_path / "moved.toml"), "ssh-config"],
        capture_output=True,
        text=True,
        env=cli_env(tmp_path),
        timeout=60,
    )
    assert again.returncode == 0, again.stderr
    text = cfg.read_text()
    assert text.count(f"Host {name}\n") == 1 and "    Port 2\n" in text and text.endswith("\n" + USER_CONFIG)

    gone = run_gpu_tui(tmp_path, [sshd_instance], "ssh-config", "--remove")
    assert gone.returncode == 0 and name in gone.stdout
    assert cfg.read_text() == USER_CONFIG
    nothing = run_gpu_tui(tmp_path, [sshd_instance], "ssh-config", "--remove")
    assert nothing.returncode == 0 and "nothing" in nothing.stdout and cfg.read_text() == USER_CONFIG


def test_a_users_own_host_and_a_bad_alias_are_left_alone(sshd_instance, tmp_path: Path) -> None:
    cfg = ssh_config(tmp_path)
    cfg.parent.mkdir(parents=True)
    mine = f"Host {sshd_instance.name}\n    HostName somewhere.else\n"
    cfg.write_text(mine)
    res = run_gpu_tui(tmp_path, [sshd_instance], "ssh-config")
    assert res.returncode == 0 and "your own" in res.stderr
    assert cfg.read_text() == mine and "no Host blocks" in res.stdout  # no empty section either

    bad = config_text([sshd_instance]).replace(f'name = "{sshd_instance.name}"', 'name = ".hidden"')
    (tmp_path / "bad.toml").write_text(bad)
    out = subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(tmp_path / "bad.toml"), "ssh-config", ".hidden"],
        capture_output=True,
        text=True,
        env=cli_env(tmp_path),
        timeout=60,
    )
    assert out.returncode == 2 and "cannot be an ssh alias" in out.stderr and "Traceback" not in out.stderr
    unknown = run_gpu_tui(tmp_path, [sshd_instance], "ssh-config", "nope")
    assert unknown.returncode == 2 and "no instance named 'nope'" in unknown.stderr


def test_an_instance_whose_host_is_the_users_alias(sshd_instance, tmp_path: Path) -> None:
    # `add --from-ssh-config` leaves host = the user's alias: OpenSSH would not look it up again
    cfg = ssh_config(tmp_path)
    cfg.parent.mkdir(parents=True)
    mine = f"Host lab  # my lab box\n    HostName {sshd_instance.host}\n"
    cfg.write_text(mine)
    text = config_text([sshd_instance]).replace(f'host = "{sshd_instance.host}"', 'host = "lab"')
    (tmp_path / "alias.toml").write_text(text)
    res = subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(tmp_path / "alias.toml"), "ssh-config"],
        capture_output=True,
        text=True,
        timeout=60,
        env=cli_env(tmp_path, known_hosts=sshd_instance.host_public_key_line + "\n"),
    )
    assert res.returncode == 0, res.stderr
    assert "your own Host entry" in res.stderr
    assert f"    HostName {sshd_instance.host}" in blocks_in(cfg.read_text())[sshd_instance.name]
    assert cfg.read_text().endswith(mine)
    login = openssh(tmp_path, sshd_instance.name, "true")
    assert login.returncode == 0, login.stderr


def test_password_only_instance_gets_the_app_key_first(sshd_instance, password_user, tmp_path: Path) -> None:
    cfg_file = tmp_path / "pw.toml"
    cfg_file.write_text(
        "[settings]\nconnect_timeout_seconds = 3.0\n\n[[instances]]\n"
        f'name = "pw-box"\nhost = "{sshd_instance.host}"\nport = {sshd_instance.port}\n'
        f'user = "{password_user.name}"\n'
    )
    env = cli_env(tmp_path, known_hosts=sshd_instance.host_public_key_line + "\n")
    env[env_var_name("pw-box")] = password_user.password

    def gpu_tui(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "gpu_tui", "--config", str(cfg_file), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=90,
            stdin=subprocess.DEVNULL,
        )

    # without a terminal and without --install-key: written, but it says the key is missing (exit 3)
    first = gpu_tui("ssh-config")
    assert first.returncode == 3 and "password only" in first.stderr, first.stderr
    assert openssh(tmp_path, "pw-box", "true").returncode == 255

    second = gpu_tui("ssh-config", "--install-key")
    assert second.returncode == 0, second.stderr
    assert "key installed" in second.stdout
    app_key = tmp_path / "xdg-data" / "gpu-tui" / "id_ed25519"
    assert f"    IdentityFile {app_key}" in blocks_in(ssh_config(tmp_path).read_text())["pw-box"]
    login = openssh(tmp_path, "pw-box", "id -un")
    assert login.returncode == 0 and login.stdout.strip() == password_user.name, login.stderr
    assert password_user.password not in ssh_config(tmp_path).read_text()
    # now a key login works: no question, exit 0
    assert gpu_tui("ssh-config").returncode == 0


def test_code_opens_vscode_or_says_how_to_connect(sshd_instance, tmp_path: Path) -> None:
    extra = 'workdir = "/root/proj"\n'
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "code-argv"
    fake = bin_dir / "code"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {record}\n")
    fake.chmod(0o755)
    cfg_file = tmp_path / "code.toml"
    cfg_file.write_text(config_text([sshd_instance]) + extra)

    def code(path_env: str, *args: str) -> subprocess.CompletedProcess[str]:
        env = cli_env(tmp_path, known_hosts=sshd_instance.host_public_key_line + "\n")
        env["PATH"] = path_env
        return subprocess.run(
            [sys.executable, "-m", "gpu_tui", "--config", str(cfg_file), "code", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )

    plain_path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "code").exists())
    missing = code(plain_path, sshd_instance.name)
    assert missing.returncode == 2 and "Remote-SSH" in missing.stderr and f"ssh {sshd_instance.name}" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    assert sshd_instance.name in blocks_in(ssh_config(tmp_path).read_text())  # the block is there anyway

    opened = code(f"{bin_dir}{os.pathsep}{plain_path}", sshd_instance.name)
    assert opened.returncode == 0, opened.stderr
    assert record.read_text().splitlines() == ["--remote", f"ssh-remote+{sshd_instance.name}", "/root/proj"]
    code(f"{bin_dir}{os.pathsep}{plain_path}", sshd_instance.name, "/data/x")
    assert record.read_text().splitlines()[-1] == "/data/x"


def test_a_symlinked_ssh_config_stays_a_link(sshd_instance, tmp_path: Path) -> None:
    """~/.ssh/config kept by a dotfile manager (a link): the file it points to gets the section."""
    cfg = ssh_config(tmp_path)
    cfg.parent.mkdir(parents=True)
    real = tmp_path / "dotfiles" / "ssh_config"
    real.parent.mkdir()
    real.write_text(USER_CONFIG)
    cfg.symlink_to(real)
    res = run_gpu_tui(tmp_path, [sshd_instance], "ssh-config")
    assert res.returncode == 0, res.stderr
    assert cfg.is_symlink() and real.read_text().endswith(USER_CONFIG) and BEGIN in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    removed = run_gpu_tui(tmp_path, [sshd_instance], "ssh-config", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert cfg.is_symlink() and real.read_text() == USER_CONFIG
