"""`gpu-tui add` / `remove` against real sshd: a pasted login command becomes a config entry
(comments kept), the password goes to a real (file) keyring and never into the config or a
process's argv, and every failure leaves the config as it was."""

from __future__ import annotations

import base64
import subprocess
import sys
import tomllib
from pathlib import Path

from argvwatch import argv_holding
from sshhelp import cli_env

HEADER = (
    '# my GPUs\n[settings]\ncurrency = "¥"   # yuan\nconnect_timeout_seconds = 3\n\n'
    '# the old box\n[[instances]]\nname = "old"\nhost = "10.9.9.9"\n'
)


def env_for(tmp: Path) -> dict[str, str]:
    return cli_env(tmp, keyring="keyrings.alt.file.PlaintextKeyring")


def gpu_tui(
    tmp: Path, *args: str, stdin: str = "", watch_argv_for: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI; with `watch_argv_for`, scan every process's argv while it runs."""
    with argv_holding(watch_argv_for) as seen:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gpu_tui", "--config", str(tmp / "config.toml"), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env_for(tmp),
        )
        out, err = proc.communicate(stdin, timeout=60)
    assert seen == [], f"the password showed up in a process's argv: {seen}"
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def keyring_text(tmp: Path) -> str:
    f = tmp / "xdg-data" / "python_keyring" / "keyring_pass.cfg"
    return f.read_text() if f.exists() else ""


def test_add_with_password_keeps_comments_and_stores_the_secret_in_the_keyring(
    sshd_instance, password_user, tmp_path: Path
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(HEADER)
    login = f"ssh -p {sshd_instance.port} {password_user.name}@{sshd_instance.host}"
    res = gpu_tui(
        tmp_path,
        "add",
        login,
        "--password-stdin",
        "--trust",
        sshd_instance.host_key_fingerprint,
        "--rate",
        "1.98",
        "--name",
        "box",
        stdin=password_user.password + "\n",
        watch_argv_for=password_user.password,
    )
    assert res.returncode == 0, res.stderr
    assert "added box" in res.stdout
    text = cfg.read_text()
    assert text.startswith(HEADER), "the user's comments and layout are kept"
    assert password_user.password not in text
    entry = [i for i in tomllib.loads(text)["instances"] if i["name"] == "box"][0]
    assert entry == {
        "name": "box",
        "host": sshd_instance.host,
        "port": sshd_instance.port,
        "user": password_user.name,
        "provider": "generic",
        "hourly_rate": 1.98,
    }
    stored = keyring_text(tmp_path)
    assert "box" in stored and base64.b64encode(password_user.password.encode()).decode() in stored
    # the stored password is what later commands use
    status = gpu_tui(tmp_path, "status", "--json", "box")
    assert status.returncode == 0, status.stderr
    assert '"online": true' in status.stdout

    gone = gpu_tui(tmp_path, "remove", "box")
    assert gone.returncode == 0, gone.stderr
    assert cfg.read_text() == HEADER
    assert base64.b64encode(password_user.password.encode()).decode() not in keyring_text(tmp_path)
    again = gpu_tui(tmp_path, "remove", "box")
    assert again.returncode == 2 and "no instance 'box'" in again.stderr


def test_install_key_then_no_password_needed(sshd_instance, password_user, tmp_path: Path) -> None:
    login = f"ssh -p {sshd_instance.port} {password_user.name}@{sshd_instance.host}"
    res = gpu_tui(
        tmp_path,
        "add",
        login,
        "--password-stdin",
        "--install-key",
        "--trust",
        sshd_instance.host_key_fingerprint,
        "--name",
        "box",
        stdin=password_user.password + "\n",
    )
    assert res.returncode == 0, res.stderr
    assert "installed gpu-tui's key" in res.stdout
    key = tmp_path / "xdg-data" / "gpu-tui" / "id_ed25519"
    assert key.is_file() and oct(key.stat().st_mode & 0o777) == "0o600"
    authorized = Path(sshd_instance.home(password_user.name)) / ".ssh" / "authorized_keys"
    pub = key.with_name("id_ed25519.pub").read_text().strip()
    assert pub in authorized.read_text()
    # forget the password: the app key alone logs in
    (tmp_path / "xdg-data" / "python_keyring" / "keyring_pass.cfg").unlink()
    status = gpu_tui(tmp_path, "status", "--json", "box")
    assert status.returncode == 0 and '"online": true' in status.stdout, status.stderr
    # installing twice adds no second line
    res = gpu_tui(tmp_path, "add", login, "--password-stdin", "--install-key", "--name", "box", stdin="\n")
    assert res.returncode == 0, res.stderr
    assert authorized.read_text().count(pub) == 1


def test_failures_write_nothing(sshd_instance, password_user, tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(HEADER)
    login = f"ssh -p {sshd_instance.port} {password_user.name}@{sshd_instance.host}"
    fp = sshd_instance.host_key_fingerprint
    other_port = sshd_instance.port + 1 if sshd_instance.port < 65535 else 1
    cases = [
        (["add", "ssh -p 70000 root@h"], "", 2, "port"),
        (["add", "telnet h"], "", 2, "login command"),
        (["add", login, "--password-stdin"], "x\n", 2, f"--trust {fp}"),  # unknown key, nobody to ask
        (["add", login, "--password-stdin", "--trust", "SHA256:not-it"], "x\n", 2, f"offers host key {fp}"),
        (["add", login, "--password-stdin", "--trust", fp], "wrong\n", 3, "nothing written"),
        (["add", f"ssh -p {other_port} root@127.0.0.1", "--password-stdin"], "x\n", 3, "unreachable"),
    ]
    for args, stdin, code, message in cases:
        res = gpu_tui(tmp_path, *args, stdin=stdin)
        assert res.returncode == code, (args, res.stdout, res.stderr)
        assert message in res.stderr and "Traceback" not in res.stderr, (args, res.stderr)
        assert cfg.read_text() == HEADER, args
    # a changed host key is refused too
    known = tmp_path / "xdg-data" / "gpu-tui" / "known_hosts"
    other_key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    known.write_text(f"[{sshd_instance.host}]:{sshd_instance.port} {other_key}\n")
    res = gpu_tui(tmp_path, "add", login, "--password-stdin", stdin=password_user.password + "\n")
    assert res.returncode == 3 and "host key changed" in res.stderr, res.stderr
    assert cfg.read_text() == HEADER


def test_readding_after_a_port_change_updates_the_same_entry(sshd_factory, tmp_path: Path) -> None:
    first = sshd_factory("first")
    key = first.client_key_path
    login = f"ssh -p {first.port} -i {key} root@{first.host}"
    res = gpu_tui(
        tmp_path, "add", login, "--password-stdin", "--trust", first.host_key_fingerprint, "--rate", "2", stdin="\n"
    )
    assert res.returncode == 0, res.stderr
    name = tomllib.loads((tmp_path / "config.toml").read_text())["instances"][0]["name"]
    # the same machine on a new port: same host key
    moved = sshd_factory("moved", start=False)
    moved.host_key_path.write_bytes(first.host_key_path.read_bytes())
    moved.start()
    first.stop()
    res = gpu_tui(
        tmp_path,
        "add",
        f"ssh -p {moved.port} -i {key} root@{moved.host}",
        "--password-stdin",
        "--trust",
        first.host_key_fingerprint,
        stdin="\n",
    )
    assert res.returncode == 0, res.stderr
    entries = tomllib.loads((tmp_path / "config.toml").read_text())["instances"]
    assert [(e["name"], e["port"], e["hourly_rate"]) for e in entries] == [(name, moved.port, 2.0)]
    assert f"updated {name}" in res.stdout
    # another machine behind the same host and user (an AutoDL region): a new entry
    other = sshd_factory("other")
    res = gpu_tui(
        tmp_path,
        "add",
        f"ssh -p {other.port} -i {key} root@{other.host}",
        "--password-stdin",
        "--trust",
        other.host_key_fingerprint,
        stdin="\n",
    )
    assert res.returncode == 0, res.stderr
    entries = tomllib.loads((tmp_path / "config.toml").read_text())["instances"]
    assert len(entries) == 2 and entries[1]["port"] == other.port and entries[1]["name"] != name


def test_from_ssh_config(tmp_path: Path) -> None:
    ssh = tmp_path / "home" / ".ssh"
    ssh.mkdir(parents=True)
    (ssh / "config").write_text(
        "Host lab\n  HostName 10.0.0.5\n  User alice\n  Port 2200\n\n"
        "Host runpod-a\n  HostName 213.173.108.12\n  Port 17445\n"
        "  IdentityFile ~/.ssh/id_ed25519\n\nHost *\n  User root\n"
    )
    res = gpu_tui(tmp_path, "add", "--from-ssh-config", "lab")
    assert res.returncode == 0, res.stderr
    res = gpu_tui(tmp_path, "add", "--from-ssh-config")  # no terminal to choose on
    assert res.returncode == 2 and "lab, runpod-a" in res.stderr
    res = gpu_tui(tmp_path, "add", "--from-ssh-config", "nope")
    assert res.returncode == 2 and "not in ~/.ssh/config: nope" in res.stderr
    res = gpu_tui(tmp_path, "add", "--from-ssh-config", "runpod-a")
    entries = tomllib.loads((tmp_path / "config.toml").read_text())["instances"]
    assert entries == [
        {"name": "lab", "host": "10.0.0.5", "port": 2200, "user": "alice", "provider": "generic"},
        {
            "name": "runpod-a",
            "host": "213.173.108.12",
            "port": 17445,
            "user": "root",
            "provider": "generic",
            "identity_file": "~/.ssh/id_ed25519",
        },
    ]
