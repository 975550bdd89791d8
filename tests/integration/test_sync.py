"""`gpu-tui sync` against real sshd instances: rsync over gpu-tui's own transport, and SFTP.

Each CLI call runs `python -m gpu_tui` in a clean environment (its own XDG dirs with the
instance's host key trusted, no keyring), like tests/sshhelp.run_gpu_tui, plus a `sync = {...}`
table and optionally a password user and the password in GPU_TUI_PASSWORD_<NAME>.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.sshd

EXCLUDES = '[".git", "__pycache__", "*.ckpt", "/out/", "logs/*.log"]'
MB = 1024 * 1024


class Cli:
    """`gpu-tui` for one instance: writes the config once, runs commands, returns results."""

    def __init__(
        self,
        tmp: Path,
        inst,
        *,
        user: str = "root",
        key: bool = True,
        password: str | None = None,
        name: str | None = None,
    ) -> None:
        self.tmp, self.inst, self.name = tmp, inst, name or inst.name
        tmp.mkdir(parents=True, exist_ok=True)
        self.config = tmp / "config.toml"
        lines = [
            "[settings]",
            "connect_timeout_seconds = 5",
            "",
            "[[instances]]",
            f'name = "{self.name}"',
            f'host = "{inst.host}"',
            f"port = {inst.port}",
            f'user = "{user}"',
        ]
        if key:
            lines.append(f'identity_file = "{inst.client_key_path}"')
        lines.append(f"sync = {{ exclude = {EXCLUDES} }}")
        self.config.write_text("\n".join(lines) + "\n")
        data = tmp / "xdg-data" / "gpu-tui"
        data.mkdir(parents=True, exist_ok=True)
        (data / "known_hosts").write_text(inst.host_public_key_line + "\n")
        (tmp / "home").mkdir(exist_ok=True)
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp / "home"),
            "XDG_DATA_HOME": str(tmp / "xdg-data"),
            "XDG_STATE_HOME": str(tmp / "xdg-state"),
            "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
            "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
        }
        if password is not None:
            self.env["GPU_TUI_PASSWORD_" + self.name.upper().replace("-", "_")] = password

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "gpu_tui", "--config", str(self.config), *args]

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), capture_output=True, text=True, env=self.env, timeout=timeout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.argv(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.env
        )

    def sync(self, *args: str) -> dict:
        res = self.run("sync", self.name, *args, "--json")
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)


def make_tree(root: Path) -> dict[str, bytes]:
    """A project with files to send and files the excludes must keep back."""
    files = {
        "train.py": b"print('hi')\n",
        "data/a.bin": os.urandom(300_000),
        "data/deep/b.bin": os.urandom(200_000),
        "name with spaces & $dollar.txt": b"odd name\n",
        "logs/sub/keep.log": b"kept: logs/*.log does not reach into sub/\n",
        "src/out/keep.txt": b"kept: /out/ is anchored at the root\n",
    }
    excluded = {
        ".git/HEAD": b"ref\n",
        "pkg/__pycache__/m.pyc": b"x",
        "model.ckpt": b"big",
        "runs/1/last.ckpt": b"big",
        "out/result.txt": b"root out/",
        "logs/train.log": b"log",
    }
    for rel, data in {**files, **excluded}.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return files


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".rsync-partial" not in p.parts
    }


@pytest.mark.parametrize("method", ["rsync", "sftp"])
def test_push_pull_round_trip_excludes_and_only_changed_files(sshd_instance, tmp_path: Path, method: str) -> None:
    cli = Cli(tmp_path, sshd_instance)
    flag = ["--sftp"] if method == "sftp" else []
    src = tmp_path / "src"
    files = make_tree(src)
    remote = sshd_instance.home() / "proj"
    (remote).mkdir()
    (remote / "only-remote.txt").write_text("never deleted")

    first = cli.sync("push", str(src), "proj", *flag)
    assert first["method"] == method and first["files_sent"] == len(files)
    assert first["remote"] == str(remote)
    assert first["bytes_sent"] >= 500_000
    assert tree(remote) == {**files, "only-remote.txt": b"never deleted"}  # excludes held back, nothing deleted

    again = cli.sync("push", str(src), "proj", *flag)
    assert again["files_sent"] == 0 and again["bytes_sent"] < 5_000

    new = os.urandom(300_000)
    (src / "data/a.bin").write_bytes(new)
    # same size: the quick check needs another modification second (SFTP keeps whole seconds)
    later = int((src / "train.py").stat().st_mtime) + 2
    os.utime(src / "data/a.bin", (later, later))
    changed = cli.sync("push", str(src), "proj", *flag)
    assert changed["files_sent"] == 1
    assert 250_000 < changed["bytes_sent"] < 340_000  # about that file, not the tree
    assert (remote / "data/a.bin").read_bytes() == new

    back = tmp_path / "back"
    pulled = cli.sync("pull", str(back), "proj", *flag)
    assert pulled["method"] == method and pulled["files_sent"] == len(files) + 1
    assert tree(back) == {**files, "data/a.bin": new, "only-remote.txt": b"never deleted"}
    assert cli.sync("pull", str(back), "proj", *flag)["files_sent"] == 0
    mtime = (src / "train.py").stat().st_mtime
    assert int((back / "train.py").stat().st_mtime) == int(mtime)  # times kept: the quick check works


def test_text_output_dry_run_and_defaults(sshd_instance, tmp_path: Path) -> None:
    cli = Cli(tmp_path / "a dir's name", sshd_instance)  # the config path reaches rsync's -e quoted
    src = tmp_path / "src"
    files = make_tree(src)
    res = cli.run("sync", cli.name, "push", str(src), "--dry-run")  # REMOTE: the remote home
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("dry run, ") and f"would send {len(files)} files" in res.stdout
    assert not (sshd_instance.home() / "train.py").exists()
    res = cli.run("sync", cli.name, "push", str(src), "dest/inner")
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith(f"pushed {src} -> {cli.name}:{sshd_instance.home()}/dest/inner: ")
    assert "(rsync)" in res.stdout
    assert (sshd_instance.home() / "dest/inner/train.py").exists()


def test_input_and_remote_errors(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("gpu")
    cli = Cli(tmp_path, inst)
    cases = [
        (["sideways"], 2, "direction must be push or pull, got 'sideways'"),
        (["push", str(tmp_path / "missing")], 2, f"LOCAL {tmp_path / 'missing'} does not exist"),
        (["pull", str(tmp_path / "x"), "no/such/dir"], 2, "no/such/dir is not a directory on the instance"),
        (["pull", str(tmp_path / "x"), "no/such/dir", "--sftp"], 2, "is not a directory on the instance"),
    ]
    for args, code, message in cases:
        res = cli.run("sync", cli.name, *args)
        assert res.returncode == code, (args, res.stderr)
        assert message in res.stderr, (args, res.stderr)
        assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, (args, res.stderr)
    inst.stop()
    down = cli.run("sync", cli.name, "push", str(tmp_path))
    assert down.returncode == 3 and "unreachable" in down.stderr and down.stderr.count("\n") == 1, down.stderr


def _tree_pids_named(word: bytes) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if word in argv:
                out.append(int(entry))
    return out


def test_password_only_login_never_shows_the_password(sshd_instance, password_user, tmp_path: Path) -> None:
    wrong = Cli(tmp_path / "wrong", sshd_instance, user=password_user.name, key=False, password="not-it")
    denied = wrong.run("sync", wrong.name, "push", str(tmp_path))
    assert denied.returncode == 3 and "auth failed" in denied.stderr, denied.stderr

    cli = Cli(tmp_path, sshd_instance, user=password_user.name, key=False, password=password_user.password)
    src = tmp_path / "src"
    src.mkdir()
    (src / "big.bin").write_bytes(os.urandom(6 * MB))
    (src / "small.txt").write_text("hello")
    proc = cli.popen("sync", cli.name, "push", str(src), "proj", "--json", "--bwlimit", "3000")
    secret = password_user.password.encode()
    seen_transport, scans = False, 0
    try:
        while proc.poll() is None:
            seen_transport |= bool(_tree_pids_named(b"_transport"))
            for entry in os.listdir("/proc"):
                if entry.isdigit():
                    try:
                        cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                    except OSError:
                        continue
                    assert secret not in cmdline, f"password in the argv of pid {entry}"
            scans += 1
            time.sleep(0.05)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert seen_transport and scans > 5  # the scans ran while rsync and its transport were up
    summary = json.loads(out)
    assert summary["method"] == "rsync" and summary["files_sent"] == 2
    assert (sshd_instance.home(password_user.name) / "proj" / "big.bin").read_bytes() == (src / "big.bin").read_bytes()


def _partials(remote: Path) -> list[Path]:
    return [p for p in remote.rglob(".big.bin*")] + [p for p in remote.rglob(".rsync-partial/big.bin")]


@pytest.mark.parametrize("method", ["rsync", "sftp"])
def test_interrupted_transfer_resumes(sshd_instance, tmp_path: Path, method: str) -> None:
    cli = Cli(tmp_path, sshd_instance)
    flag = ["--sftp"] if method == "sftp" else []
    src = tmp_path / "src"
    src.mkdir()
    size = 48 * MB
    (src / "big.bin").write_bytes(os.urandom(size))
    remote = sshd_instance.home() / "proj"
    proc = cli.popen("sync", cli.name, "push", str(src), "proj", *flag, "--bwlimit", "8000")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(p.stat().st_size > 16 * MB for p in _partials(remote) if p.is_file()):
            break
        time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("no partial file grew on the instance")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "sync cancelled" in err, err
    deadline = time.monotonic() + 5
    while _tree_pids_named(b"_transport") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _tree_pids_named(b"_transport"), "the transport outlived the cancel"
    assert not (remote / "big.bin").exists()

    resumed = cli.sync("push", str(src), "proj", *flag)
    assert resumed["files_sent"] == 1
    assert resumed["bytes_sent"] < size - 10 * MB, resumed  # the partial was reused
    assert (remote / "big.bin").read_bytes() == (src / "big.bin").read_bytes()
    assert not [p for p in remote.rglob(".big.bin*")]


def test_sftp_fallback_when_the_instance_has_no_rsync(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("norsync", start=False)
    nobin = inst.dir / "nobin"  # a PATH with a shell but no rsync (`command -v rsync` fails)
    nobin.mkdir()
    os.symlink("/bin/sh", nobin / "sh")
    # the first SetEnv that applies wins, and sshd's own comes later in a `Match User root` block
    inst.extra_config += [
        "Match User root",
        f"    SetEnv PATH={nobin} HOME={inst.home()} GPU_TUI_FAKE_INSTANCE={inst.dir}",
    ]
    inst.start()
    cli = Cli(tmp_path, inst)
    src = tmp_path / "src"
    files = make_tree(src)
    res = cli.run("sync", cli.name, "push", str(src), "proj", "--json")
    assert res.returncode == 0, res.stderr
    assert "no rsync >= 3.0 on norsync: using SFTP" in res.stderr
    assert json.loads(res.stdout)["method"] == "sftp"
    assert tree(inst.home() / "proj") == files
