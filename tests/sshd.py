"""Real OpenSSH ``sshd`` processes on loopback, one per simulated GPU instance.

Library for the integration tier (tests/conftest.py wraps it in fixtures; benchmarks may use it
directly). No mocks: every instance is ``/usr/sbin/sshd -D -e -f <its own sshd_config>`` on
127.0.0.1 with its own ed25519 host key, a fake ``nvidia-smi`` and ``shutdown`` first on PATH,
its own HOME per user, and in each HOME a fake conda install (``~/miniconda3``) that is NOT on
PATH, as on a rented machine.

Layout of a session root (``SshdSession.root``, a 0755 dir under /tmp)::

    client_key, client_key.pub        ed25519 key authorised for root on every instance
    authorized_keys/<user>            AuthorizedKeysFile (per user; only root's exists), and
                                      each HOME's .ssh/authorized_keys as on a real machine
    captures/                         copy of tests/data/nvidia-smi/captures (readable by all)
    <instance dir>/                   one per SshdInstance (name, or name-2, name-3 ...)
        ssh_host_ed25519_key(.pub)    host key (regenerate_host_key() replaces it)
        sshd_config  sshd.log  sshd.pid (sshd's PidFile)  listener.pid (ours)  launch.sh
        known_hosts                   "[127.0.0.1]:PORT ssh-ed25519 AAAA..." for OpenSSH clients
        bin/nvidia-smi  bin/shutdown  installed fakes (absolute interpreter, paths baked in)
        nvsmi/capture gpus mode stray_line utilization   the fake nvidia-smi's state (re-read every tick)
        conda/version delay unavailable      the fake conda's state (all users' installs; re-read
                                      every call; set_conda_version(), set_conda_delay())
        home/<user>/.bashrc .profile  each user's HOME on this instance
        home/<user>/miniconda3/       fake conda install of that user (conda_root(user));
                                      set_conda() moves it to ~/anaconda3 or ~/miniforge3 or
                                      removes it:
            bin/conda                 the fake (tests/fakes/conda, running lib/sim/conda.py; absolute
                                      interpreter, state dir baked in; its root prefix is where it lies)
            bin/python, bin/python3   symlinks to the fakes' interpreter (fake_python())
            condabin/conda            a symlink to bin/conda, as in a real install
            conda-meta/history        makes a dir an environment (real conda checks it too)
            envs/llm  envs/py311      default envs (python 3.10 / 3.11): bin/python(3) symlinks,
                                      conda-meta/history; add_conda_env() adds more
        tmp/                          TMUX_TMPDIR (a tmux server per instance, not per machine)
        shutdown.log  powered_off  shutdown_delay   what the fake shutdown did

How PATH reaches a non-interactive ``ssh host cmd`` (verified with OpenSSH 9.2 on Debian 12):

- ``SetEnv`` in sshd_config DOES override sshd's built-in default PATH (session.c applies the
  admin's SetEnv after setting PATH/HOME/USER), and it may sit in ``Match User`` blocks; only
  the first SetEnv line that applies to a connection counts, so each user gets one complete
  line and ``Match all`` is the fallback.
- BUT Debian's bash is built with SSH_SOURCE_BASHRC: for ``ssh host cmd`` it sources
  ``~/.bashrc`` even though the shell is not interactive. The test machine's own
  /root/.bashrc (here: pyenv + cargo, which prepend three dirs to PATH and take ~100 ms) would
  then run inside every simulated instance. Fix: SetEnv also sets ``HOME=<inst>/home/<user>``;
  bash expands ``~/.bashrc`` through $HOME, so it sources OUR .bashrc, which (like Ubuntu's
  /etc/skel/.bashrc) returns at once for non-interactive shells, after ``cd "$HOME"`` (sshd
  itself chdir()s to the passwd home, /root). SFTP starts in the same dir
  (``Subsystem sftp internal-sftp -d <inst>/home/%u``). Result: PATH is exactly
  ``<inst>/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`` for root, and
  ``command -v nvidia-smi`` is the fake, whatever the machine's dotfiles say.
- Login shells (a pty + shell request) read /etc/profile, which on Debian resets PATH; our
  ~/.profile puts ``<inst>/bin`` back in front.
- conda: ``~/miniconda3/bin`` is on no PATH and ``CONDA_EXE`` is not set, so for ``ssh host
  cmd`` ``command -v conda`` fails, exactly as on AutoDL; gpu-tui must probe ``$CONDA_EXE``,
  ``command -v conda``, ``~/miniconda3``, ``~/anaconda3``, ... itself. ``conda init bash``
  (the fake implements it) appends its block to ~/.bashrc AFTER the non-interactive
  ``return``.

Power guard: gpu-tui runs ``shutdown`` as root over SSH, and these sshd processes run as root on
the developer's / CI machine. ``shutdown`` on PATH is the fake, but an absolute path
(``/usr/sbin/shutdown``) or ``sudo`` (secure_path) would reach the real one. So where the
machine allows it (root with CAP_SYS_ADMIN; probed once), each sshd starts in a private mount
namespace (``unshare --mount --propagation private``) in which the fake shutdown is
bind-mounted over every real shutdown/poweroff/halt/reboot (for systemd that is
/usr/bin/systemctl, which the fake then answers as a container's systemctl would).
``SshdInstance.power_guard`` says whether it is on. Nothing leaks out of the namespace.

Processes: each sshd runs in its own session (setsid) so a Ctrl-C in pytest does not reach it.
Every session on an instance carries ``GPU_TUI_FAKE_INSTANCE=<instance dir>`` in its
environment, and so does anything it starts (``setsid nohup`` jobs, tmux servers), so kill(),
stop() and the fake shutdown find them even outside sshd's process tree. Safety nets: an
atexit hook (kill_all_started) and, when a new session starts, sweep_stale_sessions(), which
cleans up roots whose owning process died without cleaning up (SIGKILL).

Password user: ``gputui-pw`` (useradd, home /home/gputui-pw, /bin/bash), password random per
test session via chpasswd on stdin; concurrent test sessions on one machine share it through
flock()s in /run/gpu-tui-tests (see ensure_password_user). sshd reads /etc/shadow itself
(``UsePAM no``). The session client key is authorised for root only.

Needs: root, /usr/sbin/sshd (apt: openssh-server), useradd + chpasswd (passwd), python3,
unshare + mount (util-linux, mount; optional: the power guard). The sshd tier must run in CI:
anything missing raises SshdError, never a skip.
"""

from __future__ import annotations

import atexit
import dataclasses
import fcntl
import os
import pwd
import secrets
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import asyncssh

from gpu_tui.demo.sim import condastate as simconda
from gpu_tui.demo.sim import nvsmi

SSHD = "/usr/sbin/sshd"
HOST = "127.0.0.1"
TESTS_DIR = Path(__file__).resolve().parent
FAKES_DIR = TESTS_DIR / "fakes"
SIM_SRC = TESTS_DIR.parent / "gpu_tui" / "demo" / "sim"
CAPTURES_SRC = TESTS_DIR / "data" / "nvidia-smi" / "captures"
DEFAULT_CAPTURE = "linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt"
PASSWORD_USER = "gputui-pw"
ROOT_USER = "root"
CONDA_VERSION = "24.9.2"
CONDA_LOCATIONS = ("miniconda3", "anaconda3", "miniforge3")  # HOME-relative, probe order
CONDA_DEFAULT_ENVS = (("llm", "3.10"), ("py311", "3.11"))  # (name, python) besides base
MODES = ("ok", "driver_failed", "version_mismatch", "gpu_lost", "no_devices", "stray")
ENV_MARK = "GPU_TUI_FAKE_INSTANCE"
SBIN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
USER_PATH = "/usr/local/bin:/usr/bin:/bin"
LOCK_DIR = Path("/run/gpu-tui-tests")
START_TIMEOUT = 10.0

# Fake nvidia-smi's failure texts (stdout) and exit codes, for assertions.
FAILURE_TEXT = {
    "driver_failed": (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running.",
        9,
    ),
    "version_mismatch": ("Failed to initialize NVML: Driver/library version mismatch", 18),
    "gpu_lost": (
        "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost.  "
        "Reboot the system to recover this GPU",
        15,
    ),
    "no_devices": ("No devices were found", 6),
}

BASHRC = """\
# ~/.bashrc of a simulated gpu-tui test instance (written by tests/sshd.py).
# sshd chdir()s to the passwd home; a real instance would start in $HOME.
cd "$HOME" 2>/dev/null
# Like Ubuntu's /etc/skel/.bashrc: nothing below reaches a non-interactive `ssh host cmd`.
case $- in
    *i*) ;;
    *) return ;;
esac
"""

PROFILE = """\
# ~/.profile of a simulated gpu-tui test instance (written by tests/sshd.py).
# /etc/profile reset PATH for this login shell; put the instance's fakes back in front.
case ":$PATH:" in *":{bin}:"*) ;; *) PATH="{bin}:$PATH" ;; esac
export PATH
if [ -n "$BASH_VERSION" ] && [ -f "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi
"""


class SshdError(RuntimeError):
    """The sshd tier cannot run here, or an instance failed to start / stop."""


# ------------------------------------------------------------------------------ helpers


def _run(argv: list[str], *, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(argv, input=input, text=True, capture_output=True, check=check)


def require_root() -> None:
    if os.geteuid() != 0:
        raise SshdError(
            "the sshd integration tier runs sshd, useradd and chpasswd as root; run the tests as root (CI does)"
        )


def require_sshd() -> None:
    if not os.access(SSHD, os.X_OK):
        raise SshdError(f"{SSHD} not found: install OpenSSH's server (apt-get install openssh-server)")


def _which_admin(tool: str) -> str:
    found = shutil.which(tool, path=SBIN_PATH)
    if not found:
        raise SshdError(
            f"{tool} not found in {SBIN_PATH}: the sshd tier needs it to create the password "
            "test user (Debian: apt-get install passwd)"
        )
    return found


_sshd_version: tuple[int, int] | None = None


def sshd_version() -> tuple[int, int]:
    """(major, minor) of /usr/sbin/sshd, e.g. (9, 2)."""
    global _sshd_version
    if _sshd_version is None:
        require_sshd()
        p = subprocess.run([SSHD, "-V"], capture_output=True, text=True)
        text = p.stderr + p.stdout
        i = text.find("OpenSSH_")
        if i < 0:
            raise SshdError(f"cannot read the OpenSSH version from `sshd -V`: {text!r}")
        major, _, rest = text[i + 8 :].partition(".")  # "9.2, OpenSSL ..." / "9.8p1 ..."
        digits = ""
        for ch in rest:
            if not ch.isdigit():
                break
            digits += ch
        _sshd_version = (int(major), int(digits or 0))
    return _sshd_version


def list_captures() -> list[str]:
    return sorted(p.name for p in CAPTURES_SRC.glob("*.txt"))


def resolve_capture(name: str | None) -> str:
    """A capture file name from a name, a unique substring of one ("h100-80gb", "l40s"), or None."""
    if not name:
        return DEFAULT_CAPTURE
    names = list_captures()
    if name in names:
        return name
    hits = [n for n in names if name in n]
    if len(hits) != 1:
        raise ValueError(f"capture {name!r} matches {hits or 'nothing'}; captures: {names}")
    return hits[0]


def fake_conda_module() -> Any:
    """The fake conda's install on disk, gpu_tui/demo/sim/condastate.py (make_prefix, read_packages, ...)."""
    return simconda


def capture_query_gpu(capture: str | None = None) -> dict[str, tuple[str, str]]:
    """{field: (header text with unit, value with unit)} of a capture's load-phase GPU row."""
    text = (CAPTURES_SRC / resolve_capture(capture)).read_text(encoding="utf-8")
    table = nvsmi.Table(text, "gpu")
    row = table.rows[0]
    return {n: (table.headers[n], nvsmi.with_unit(row[n], nvsmi.unit_of(table.headers[n]))) for n in table.names}


def capture_gpu_rows(inst: SshdInstance) -> list[dict[str, str]]:
    """The GPU rows the instance's fake nvidia-smi prints now (index, uuid, pci.bus_id...)."""
    return nvsmi.CaptureSource(str(inst.nvsmi_dir), str(inst.root / "captures")).gpu_rows()


def _world_usable(path: str) -> bool:
    """True if a non-root user can execute ``path`` (every ancestor o+x, the file o+rx)."""
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return False
    if (st.st_mode & 0o005) != 0o005:
        return False
    parent = os.path.dirname(real)
    while True:
        try:
            if not os.stat(parent).st_mode & 0o001:
                return False
        except OSError:
            return False
        if parent == "/":
            return True
        parent = os.path.dirname(parent)


_python: str | None = None


def fake_python() -> str:
    """The interpreter written into the fakes' shebang.

    /usr/bin/python3 (or /usr/local/bin/python3) when a non-root user can run it, so the
    password user's sessions work too; else the test runner's own interpreter (a venv under
    /root, or a pyenv shim target, is fine for root but not for other users)."""
    global _python
    if _python is None:
        for cand in ("/usr/bin/python3", "/usr/local/bin/python3"):
            if os.access(cand, os.X_OK) and _world_usable(cand):
                _python = cand
                break
        else:
            _python = os.path.realpath(sys.executable)
    return _python


def install_fake(src: Path, dst: Path, constants: dict[str, str]) -> None:
    """Copy a fake with an absolute ``#!<python> -IS`` shebang and baked-in constants."""
    lines = src.read_text(encoding="utf-8").split("\n")
    if not lines[0].startswith("#!"):
        raise SshdError(f"{src} has no shebang line")
    lines[0] = f"#!{fake_python()} -IS"
    for name, value in constants.items():
        marker = f"{name} = None  # replaced on install"
        idx = [i for i, ln in enumerate(lines) if ln == marker]
        if len(idx) != 1:
            raise SshdError(f"{src}: expected one line {marker!r}")
        lines[idx[0]] = f"{name} = {value!r}"
    tmp = dst.with_name(dst.name + ".tmp")
    tmp.write_text("\n".join(lines), encoding="utf-8")
    os.chmod(tmp, 0o755)
    os.replace(tmp, dst)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def read_banner(host: str, port: int, timeout: float = 2.0) -> bytes:
    """The SSH identification line the server sends first (raises OSError if none)."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        data = b""
        while b"\n" not in data and len(data) < 512:
            chunk = s.recv(256)
            if not chunk:
                break
            data += chunk
    if not data.startswith(b"SSH-"):
        raise OSError(f"no SSH banner: {data!r}")
    return data.split(b"\n", 1)[0].rstrip(b"\r")


# ---------------------------------------------------------------------------- processes


def _children_map() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (parents before children)."""
    kids = _children_map()
    out: list[int] = []
    stack = list(kids.get(pid, ()))
    while stack:
        p = stack.pop(0)
        out.append(p)
        stack.extend(kids.get(p, ()))
    return out


def marked_processes(value_prefix: str) -> list[int]:
    """Processes whose environment has GPU_TUI_FAKE_INSTANCE starting with ``value_prefix``.

    Every session on an instance carries it (SetEnv), and so does anything those sessions
    started, even after ``setsid nohup`` or a tmux server moved it out of sshd's tree."""
    needle = f"{ENV_MARK}={value_prefix}".encode()
    me = os.getpid()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if any(item.startswith(needle) for item in env.split(b"\0")):
            found.append(int(name))
    return found


def _signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _proc_stat(pid: int) -> list[bytes] | None:
    """Fields of /proc/PID/stat after the command name (state is [0], starttime [19])."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2 :].split()


def _proc_state(pid: int) -> str | None:
    fields = _proc_stat(pid)
    return fields[0].decode() if fields else None


def _alive(pid: int) -> bool:
    return _proc_state(pid) not in (None, "Z", "X")


_guard_ok: bool | None = None


def power_guard_available() -> bool:
    """Can this machine give an sshd a private mount namespace with bind mounts? (probed once)"""
    global _guard_ok
    if _guard_ok is None:
        unshare, mount = shutil.which("unshare", path=SBIN_PATH), shutil.which("mount", path=SBIN_PATH)
        if os.geteuid() != 0 or not unshare or not mount:
            _guard_ok = False
        else:
            import tempfile

            with tempfile.TemporaryDirectory() as d:
                a, b = Path(d, "a"), Path(d, "b")
                a.write_text("a")
                b.write_text("b")
                p = subprocess.run(
                    [
                        unshare,
                        "--mount",
                        "--propagation",
                        "private",
                        "/bin/sh",
                        "-c",
                        f'{mount} --bind "$1" "$2" && [ "$(cat "$2")" = a ]',
                        "sh",
                        str(a),
                        str(b),
                    ],
                    capture_output=True,
                )
                _guard_ok = p.returncode == 0 and b.read_text() == "b"
    return _guard_ok


def power_targets() -> list[str]:
    """Real files a shutdown by absolute path or via sudo would execute."""
    out: list[str] = []
    for d in ("/usr/sbin", "/sbin", "/usr/bin", "/bin", "/usr/local/sbin", "/usr/local/bin"):
        for name in ("shutdown", "poweroff", "halt", "reboot"):
            p = os.path.join(d, name)
            if os.path.exists(p):
                real = os.path.realpath(p)
                if real not in out and os.path.isfile(real):
                    out.append(real)
    return out


# ------------------------------------------------------------------------ keys and users


@dataclasses.dataclass(frozen=True)
class ClientKey:
    path: Path  # private key, OpenSSH format, 0600
    public_path: Path
    key: asyncssh.SSHKey  # the private key, for asyncssh client_keys=[key]
    public_line: str  # "ssh-ed25519 AAAA... gpu-tui-tests"


def ensure_client_key(root: Path) -> ClientKey:
    """The session's client key at ``root/client_key`` (created on first use)."""
    path = Path(root) / "client_key"
    pub = path.with_name("client_key.pub")
    if not path.exists():
        key = asyncssh.generate_private_key("ssh-ed25519", comment="gpu-tui-tests")
        tmp = path.with_name("client_key.tmp")
        key.write_private_key(str(tmp))
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
        key.write_public_key(str(pub))
    key = asyncssh.read_private_key(str(path))
    line = pub.read_text().strip()
    return ClientKey(path=path, public_path=pub, key=key, public_line=line)


def authorize_key(root: Path, user: str, public_line: str) -> Path:
    """Append a public key to ``user``'s AuthorizedKeysFile of every instance in ``root``."""
    d = Path(root) / "authorized_keys"
    d.mkdir(mode=0o755, exist_ok=True)
    f = d / user
    existing = f.read_text() if f.exists() else ""
    if public_line.strip() not in existing.splitlines():
        with open(f, "a") as fh:
            fh.write(public_line.strip() + "\n")
    os.chmod(f, 0o644)
    return f


@dataclasses.dataclass(frozen=True)
class PasswordUser:
    name: str
    password: str
    uid: int
    gid: int
    home: str  # the passwd home (sshd chdir()s there); each instance sets HOME to its own dir


_password_lock_fds: dict[str, int] = {}
_password_users: dict[str, PasswordUser] = {}


def ensure_password_user(name: str = PASSWORD_USER) -> PasswordUser:
    """Create ``name`` if missing and give it a random password for this test process.

    The account and /etc/shadow are machine-wide, so test sessions running at the same time
    (several checkouts on one machine) must agree on one password. Protocol (all flock()s in
    a root-only dir under /run): under ``<name>.set.lock``, try to take ``<name>.use.lock``
    exclusively; if that works no other session is using the user: set a fresh random password
    (chpasswd, on stdin - never argv), store it 0600, and hold ``use.lock`` shared until this
    process exits; if it fails, another live session holds it shared: read its password and
    share. So the password is random per test session and never changes under a running one."""
    if name in _password_users:
        return _password_users[name]
    require_root()
    useradd = _which_admin("useradd")
    chpasswd = _which_admin("chpasswd")
    LOCK_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(LOCK_DIR, 0o700)
    set_fd = os.open(LOCK_DIR / f"{name}.set.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(set_fd, fcntl.LOCK_EX)
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            p = _run(
                [
                    useradd,
                    "--create-home",
                    "--home-dir",
                    f"/home/{name}",
                    "--shell",
                    "/bin/bash",
                    "--comment",
                    "gpu-tui test password user",
                    name,
                ],
                check=False,
            )
            if p.returncode != 0:
                raise SshdError(f"useradd {name} failed ({p.returncode}): {p.stderr.strip()}") from None
            pw = pwd.getpwnam(name)
        if not os.path.isdir(pw.pw_dir):
            os.makedirs(pw.pw_dir, mode=0o755)
            os.chown(pw.pw_dir, pw.pw_uid, pw.pw_gid)
        use_fd = os.open(LOCK_DIR / f"{name}.use.lock", os.O_RDWR | os.O_CREAT, 0o600)
        secret_file = LOCK_DIR / f"{name}.password"
        try:
            fcntl.flock(use_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            alone = True
        except BlockingIOError:
            alone = False
        if alone or not secret_file.exists():
            password = secrets.token_urlsafe(18)
            p = _run([chpasswd], input=f"{name}:{password}\n", check=False)
            if p.returncode != 0:
                raise SshdError(f"chpasswd for {name} failed ({p.returncode}): {p.stderr.strip()}")
            fd = os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(password)
        else:
            password = secret_file.read_text().strip()
        fcntl.flock(use_fd, fcntl.LOCK_SH)  # held (fd left open) until this process exits
        _password_lock_fds[name] = use_fd
    finally:
        fcntl.flock(set_fd, fcntl.LOCK_UN)
        os.close(set_fd)
    user = PasswordUser(name=name, password=password, uid=pw.pw_uid, gid=pw.pw_gid, home=pw.pw_dir)
    _password_users[name] = user
    return user


# ----------------------------------------------------------------------------- registry

_LIVE: set[SshdInstance] = set()
_ROOTS: set[str] = set()
_atexit_registered = False


def _register(inst: SshdInstance) -> None:
    global _atexit_registered
    _LIVE.add(inst)
    _ROOTS.add(str(inst.root))
    if not _atexit_registered:
        atexit.register(kill_all_started)
        _atexit_registered = True


def kill_all_started() -> None:
    """Safety net: SIGKILL every sshd this process started, its sessions and their leftovers."""
    for inst in list(_LIVE):
        try:
            inst.kill()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass
    for root in list(_ROOTS):
        _signal_all(marked_processes(root.rstrip("/") + "/"), signal.SIGKILL)


# ----------------------------------------------------------------------------- instance


class SshdInstance:
    """One simulated GPU instance: a real sshd on 127.0.0.1 with fakes first on PATH.

    ``SshdInstance(root, "gpu-a", capture="l40s", gpus=8).start()``; see the module docstring
    for the layout. Every method is synchronous and quick (start ~0.1 s)."""

    host = HOST

    def __init__(
        self,
        root_dir: str | os.PathLike,
        name: str,
        *,
        capture: str | None = None,
        gpus: int | None = None,
        mode: str = "ok",
        client_key: ClientKey | None = None,
        password_user: PasswordUser | None = None,
        port: int | None = None,
        power_guard: bool | str = "auto",
        extra_config: Iterable[str] = (),
        dir_name: str | None = None,
    ) -> None:
        require_root()
        require_sshd()
        self.root = Path(root_dir).resolve()
        self.name = name
        self.dir = self.root / (dir_name or name)
        self.bin_dir = self.dir / "bin"
        self.nvsmi_dir = self.dir / "nvsmi"
        self.sys_dir = self.dir / "sys"
        """GPU_TUI_SYSROOT: the GPUs' device files and driver files (make_gpu_devices)."""
        self.conda_state_dir = self.dir / "conda"
        self.config_path = self.dir / "sshd_config"
        self.log_path = self.dir / "sshd.log"
        self.host_key_path = self.dir / "ssh_host_ed25519_key"
        self.known_hosts_path = self.dir / "known_hosts"
        self.client_key = client_key or ensure_client_key(self.root)
        self.password_user = password_user
        self.extra_config = list(extra_config)
        self._port = port
        self._port_fixed = port is not None
        self._proc: subprocess.Popen | None = None
        self._frozen: list[int] = []
        self._orphans: list[tuple[int, bytes]] = []  # (pid, starttime) left by stop(sessions=False)
        self._log_offset = 0
        if power_guard == "auto":
            self.power_guard = power_guard_available()
        elif power_guard:
            if not power_guard_available():
                raise SshdError("power_guard=True but this machine cannot unshare a mount namespace")
            self.power_guard = True
        else:
            self.power_guard = False

        self.root.mkdir(parents=True, exist_ok=True)
        self.dir.mkdir(mode=0o755, exist_ok=False)
        for d in (self.bin_dir, self.nvsmi_dir, self.conda_state_dir, self.dir / "home"):
            d.mkdir(mode=0o755)
        tmp = self.dir / "tmp"
        tmp.mkdir()
        os.chmod(tmp, 0o1777)
        captures = self.root / "captures"
        if not captures.is_dir():
            shutil.copytree(CAPTURES_SRC, captures)
            os.chmod(captures, 0o755)
        authorize_key(self.root, ROOT_USER, self.client_key.public_line)
        log = self.dir / "shutdown.log"
        log.touch()
        os.chmod(log, 0o666)  # the fake shutdown records non-root calls too
        self._write_host_key()
        self._install_fakes()
        self.set_capture(capture)
        self.set_gpus(gpus)
        self.set_mode(mode)
        for user in self.users:
            self._make_home(user)
            self._make_conda(user)

    # ---- identity

    @property
    def port(self) -> int:
        if self._port is None:
            raise SshdError(f"{self.name}: not started yet, no port")
        return self._port

    @property
    def users(self) -> list[str]:
        return [ROOT_USER] + ([self.password_user.name] if self.password_user else [])

    @property
    def password(self) -> str | None:
        return self.password_user.password if self.password_user else None

    @property
    def client_key_path(self) -> Path:
        return self.client_key.path

    @property
    def host_key(self) -> asyncssh.SSHKey:
        return self._host_key

    @property
    def host_key_fingerprint(self) -> str:
        """``SHA256:...`` as asyncssh's ``key.get_fingerprint()`` and ``ssh-keygen -l`` print."""
        return self._host_key.get_fingerprint()

    @property
    def host_public_key(self) -> str:
        """``ssh-ed25519 AAAA...`` (no host, no comment)."""
        return " ".join(self._host_key.export_public_key("openssh").decode().split()[:2])

    @property
    def known_hosts_host(self) -> str:
        return f"[{self.host}]:{self.port}"

    @property
    def host_public_key_line(self) -> str:
        """OpenSSH known_hosts line: ``[127.0.0.1]:PORT ssh-ed25519 AAAA...``."""
        return f"{self.known_hosts_host} {self.host_public_key}"

    def known_hosts(self) -> asyncssh.SSHKnownHosts:
        """asyncssh known_hosts object trusting exactly this instance's current host key."""
        return asyncssh.import_known_hosts(self.host_public_key_line + "\n")

    def home(self, user: str = ROOT_USER) -> Path:
        """``$HOME`` of ``user`` on this instance (sessions start there)."""
        return self.dir / "home" / user

    # ---- clients

    def connect_kwargs(self, user: str = ROOT_USER, *, password: bool | None = None, **overrides: Any) -> dict:
        """kwargs for ``asyncssh.connect(**kw)``: no ~/.ssh/config, no agent, pinned host key.

        Root gets the session client key; the password user (or ``password=True``) gets
        password auth only (client keys off)."""
        use_password = (
            password if password is not None else (self.password_user is not None and user == self.password_user.name)
        )
        kw: dict[str, Any] = dict(
            host=self.host,
            port=self.port,
            username=user,
            known_hosts=self.known_hosts(),
            config=None,
            agent_path=None,
            connect_timeout=10,
        )
        if use_password:
            if self.password_user is None:
                raise SshdError(f"{self.name}: no password user on this instance")
            kw.update(client_keys=None, password=self.password_user.password, preferred_auth="password")
        else:
            kw.update(client_keys=[self.client_key.key], password=None, preferred_auth="publickey")
        kw.update(overrides)
        return kw

    def ssh_argv(self, user: str = ROOT_USER) -> list[str]:
        """OpenSSH client argv (for ``rsync -e`` etc.): key auth, pinned known_hosts, batch mode."""
        return [
            "ssh",
            "-F",
            "/dev/null",
            "-p",
            str(self.port),
            "-i",
            str(self.client_key.path),
            "-o",
            "IdentitiesOnly=yes",
            "-o",
            "BatchMode=yes",
            "-o",
            f"UserKnownHostsFile={self.known_hosts_path}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-o",
            "LogLevel=ERROR",
            "-l",
            user,
        ]

    # ---- the fake nvidia-smi

    def set_capture(self, capture: str | None) -> str:
        """Serve another capture (file name or unique substring); returns the file name."""
        name = resolve_capture(capture)
        self._write_state("capture", name)
        self.capture = name
        return name

    def set_gpus(self, gpus: int | None) -> None:
        """Replicate the capture's GPU ``gpus`` times (None: as captured)."""
        path = self.nvsmi_dir / "gpus"
        if gpus is None:
            path.unlink(missing_ok=True)
        else:
            self._write_state("gpus", str(int(gpus)))
        self.gpus = gpus

    def set_mode(self, mode: str) -> None:
        """ok | driver_failed | version_mismatch | gpu_lost | no_devices | stray; a running
        ``-lms`` stream picks it up on its next tick."""
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} not in {MODES}")
        self._write_state("mode", mode)
        self.mode = mode

    def set_stray_line(self, text: str) -> None:
        self._write_state("stray_line", text)

    def set_utilization(self, percent: int | str | Iterable[int | str] | None) -> None:
        """Pin utilization.gpu (exact, no wobble): one value for every GPU, or one per GPU (the
        last repeats); a string such as ``"[N/A]"`` is served as is. None: the capture's again."""
        path = self.nvsmi_dir / "utilization"
        if percent is None:
            path.unlink(missing_ok=True)
            return
        values = [percent] if isinstance(percent, (int, str)) else list(percent)
        self._write_state("utilization", ",".join(str(v) for v in values))

    def set_apps(self, rows: Iterable[str] | None) -> None:
        """The compute apps the fake prints instead of the capture's, `GPU_INDEX, PID, NAME,
        MEMORY` per row (a container's driver: host pids, `[Not Found]`, `[N/A]`); None: the
        capture's again."""
        path = self.nvsmi_dir / "apps"
        if rows is None:
            path.unlink(missing_ok=True)
        else:
            self._write_file(path, "\n".join(rows))

    def make_gpu_devices(self, count: int, *, information: bool = True) -> list[Path]:
        """Stand-ins for the GPUs' device files under the instance's GPU_TUI_SYSROOT (which every
        session gets): ``dev/nvidia0..count-1`` plus nvidiactl and nvidia-uvm, character devices
        (mknod of /dev/null's numbers, so anyone may open them), and, with `information`, the
        driver's ``proc/driver/nvidia/gpus/BUS/information`` per GPU naming its minor, bus id
        and UUID as the fake nvidia-smi reports them. Returns the nvidia<N> paths."""
        dev = self.sys_dir / "dev"
        dev.mkdir(parents=True, exist_ok=True)
        paths = []
        for name in [f"nvidia{i}" for i in range(count)] + ["nvidiactl", "nvidia-uvm"]:
            path = dev / name
            if not path.exists():
                os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
                os.chmod(path, 0o666)
            if name[6:].isdigit():
                paths.append(path)
        if information:
            for row in capture_gpu_rows(self):
                bus = row["pci.bus_id"].lower()[4:]  # 00000000:10:00.0 -> 0000:10:00.0, as the driver names it
                d = self.sys_dir / "proc/driver/nvidia/gpus" / bus
                d.mkdir(parents=True, exist_ok=True)
                (d / "information").write_text(
                    f"Model: \t\t {row.get('name', '?')}\nIRQ:   \t\t 95\nGPU UUID: \t {row['uuid']}\n"
                    f"Bus Location: \t {bus}\nDevice Minor: \t {row['index']}\nGPU Excluded:\t No\n"
                )
        return paths

    def use_amd(self, tool: str, answers: dict[str, str]) -> None:
        """An AMD instance: no nvidia-smi, and a stand-in `tool` (`amd-smi` or `rocm-smi`) on PATH
        that prints `answers[word]` for its first argument (`metric`, `static`; rocm-smi: `json`
        for any call), real outputs from tests/data/amd; anything else exits 2."""
        self.remove_nvidia_smi()
        d = self.dir / "amd"
        d.mkdir(exist_ok=True)
        for word, text in answers.items():
            (d / word).write_text(text)
        os.chmod(d, 0o755)
        first = '"json"' if tool == "rocm-smi" else '"$1"'
        script = (
            "#!/bin/sh\n"
            f"# {tool}, stand-in (tests/sshd.py use_amd): real outputs from tests/data/amd\n"
            f"f={shlex.quote(str(d))}/{first}\n"
            '[ -f "$f" ] && exec cat "$f"\n'
            f'echo "{tool} (stand-in): $*: not answered here" >&2; exit 2\n'
        )
        path = self.bin_dir / tool
        path.write_text(script)
        os.chmod(path, 0o755)

    def remove_nvidia_smi(self) -> None:
        """Simulate a CPU-only instance: ``nvidia-smi`` is no longer found (exit 127)."""
        (self.bin_dir / "nvidia-smi").unlink(missing_ok=True)

    def restore_nvidia_smi(self) -> None:
        self._install_fakes(shutdown=False)

    # ---- the fake shutdown

    def set_shutdown_delay(self, seconds: float) -> None:
        """Seconds between the fake shutdown returning and the instance going down (0.3)."""
        (self.dir / "shutdown_delay").write_text(f"{seconds}\n")

    @property
    def powered_off(self) -> bool:
        return (self.dir / "powered_off").exists()

    def shutdown_calls(self) -> list[dict]:
        """One dict per fake shutdown call: time, uid, action, argv (argv[0] is the program)."""
        path = self.dir / "shutdown.log"
        if not path.exists():
            return []
        calls = []
        for line in path.read_text().splitlines():
            t, uid, action, *argv = line.split("\t")
            calls.append({"time": float(t), "uid": int(uid), "action": action, "argv": argv})
        return calls

    def wait_powered_off(self, timeout: float = 5.0) -> None:
        """Wait until a fake shutdown has taken this instance down (listener gone)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.powered_off and not self.is_running and not marked_processes(str(self.dir)):
                return
            time.sleep(0.02)
        raise SshdError(f"{self.name}: not powered off after {timeout}s")

    # ---- the fake conda (one install per user, in that user's HOME; see the module docstring)

    def conda_location(self, user: str = ROOT_USER) -> str | None:
        """Where ``user``'s conda install lies, relative to HOME ("miniconda3", "anaconda3",
        "miniforge3"), or None when set_conda(False) removed it."""
        home = self.home(user)
        for loc in CONDA_LOCATIONS:
            if (home / loc / "bin" / "conda").exists():
                return loc
        return None

    def conda_root(self, user: str = ROOT_USER) -> Path:
        """The root prefix of ``user``'s conda install on this instance (``~/miniconda3`` unless
        set_conda() moved it); SshdError if there is none."""
        loc = self.conda_location(user)
        if loc is None:
            raise SshdError(f"{self.name}: {user} has no conda install (set_conda(False))")
        return self.home(user) / loc

    def conda_exe(self, user: str = ROOT_USER) -> Path:
        """``<conda_root(user)>/bin/conda``."""
        return self.conda_root(user) / "bin" / "conda"

    def set_conda(self, present: bool = True, *, location: str = "miniconda3", user: str | None = None) -> None:
        """Move the conda install of ``user`` (None: every user) to ``~/<location>``
        (one of CONDA_LOCATIONS) keeping its envs, create a fresh one if there was none, or
        with ``present=False`` remove it (gpu-tui then finds no conda)."""
        if location not in CONDA_LOCATIONS:
            raise ValueError(f"conda location {location!r} not in {CONDA_LOCATIONS}")
        for u in self.users if user is None else [user]:
            current = self.conda_location(u)
            if not present:
                if current is not None:
                    shutil.rmtree(self.home(u) / current)
            elif current is None:
                self._make_conda(u, location)
            elif current != location:
                os.rename(self.home(u) / current, self.home(u) / location)

    def conda_envs(self, user: str = ROOT_USER) -> list[str]:
        """Env names of ``user``'s install as ``conda env list`` orders them: base, then the
        envs under ``<root>/envs`` by path."""
        envs = self.conda_root(user) / "envs"
        names = sorted(p.name for p in envs.iterdir() if (p / "conda-meta" / "history").is_file())
        return ["base"] + names

    def conda_packages(self, env: str = "base", user: str = ROOT_USER) -> dict[str, str]:
        """{package name: version} of an env, as ``conda list`` would report it."""
        root = self.conda_root(user)
        prefix = root if env == "base" else root / "envs" / env
        return {n: v[0] for n, v in fake_conda_module().read_packages(str(prefix)).items()}

    def add_conda_env(
        self, name: str, python: str | None = "3.11", *, packages: Iterable[str] = (), user: str | None = None
    ) -> None:
        """Create env ``name`` directly on disk (as ``conda create -n NAME python=X pkgs...``
        would) for ``user`` (None: every user with an install). ``python=None``: an env
        without python (no bin/python), like a bare ``conda create -n NAME``."""
        specs = ([f"python={python}"] if python else []) + list(packages)
        for u in self.users if user is None else [user]:
            if self.conda_location(u) is None:
                if user is not None:
                    raise SshdError(f"{self.name}: {u} has no conda install")
                continue
            root = self.conda_root(u)
            fake_conda_module().make_prefix(
                str(root / "envs" / name),
                specs,
                argv=["create", "-n", name, "-y"] + specs,
                python=fake_python(),
                conda_exe=str(root / "bin" / "conda"),
            )
            self._chown_tree(root / "envs", u)

    def set_conda_delay(self, seconds: float) -> None:
        """Seconds that create / install / remove spend "Downloading and Extracting Packages"
        (after printing their plan, before the env changes on disk). 0: none."""
        self._write_file(self.conda_state_dir / "delay", str(float(seconds)))

    def set_conda_version(self, version: str = CONDA_VERSION) -> None:
        """What ``conda --version`` / ``conda info`` claim; below 23.11 ``conda activate``
        fails with the old CommandNotFoundError text, below 4.4 base is called "root"."""
        self._write_file(self.conda_state_dir / "version", version)

    # ---- lifecycle

    @property
    def pid(self) -> int | None:
        """The sshd listener's pid (None when not running)."""
        return self._proc.pid if self.is_running else None

    @property
    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def is_frozen(self) -> bool:
        return bool(self._frozen)

    def session_pids(self) -> list[int]:
        """Per-connection sshd processes and everything they started (still under sshd)."""
        return descendants(self._proc.pid) if self.is_running else []

    def start(self, timeout: float = START_TIMEOUT) -> SshdInstance:
        """Start sshd (a free port the first time, the same port ever after) and wait until it
        sends its SSH banner. After a fake shutdown this is "power the instance back on"."""
        if self.is_running:
            return self
        (self.dir / "powered_off").unlink(missing_ok=True)
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation dir
        attempts = 1 if self._port_fixed else 5
        for attempt in range(attempts):
            if self._port is None:
                self._port = free_port()
            try:
                self._spawn(timeout)
                break
            except SshdError as e:
                if "Address already in use" in str(e) and attempt + 1 < attempts:
                    self._port = None
                    continue
                raise
        self._port_fixed = True  # restart() reuses it
        self._write_known_hosts()
        _register(self)
        return self

    def stop(self, *, sessions: bool = True, timeout: float = 5.0) -> None:
        """SIGTERM the listener; with ``sessions`` also end every open connection and what the
        sessions started (sessions=False is ``systemctl stop ssh``: connections stay up)."""
        proc = self._proc
        if proc is None:
            return
        if sessions:
            victims = self._session_victims()
        else:
            victims = []
            for pid in self.session_pids():
                fields = _proc_stat(pid)
                if fields:
                    self._orphans.append((pid, fields[19]))
        if proc.poll() is None:
            _signal_all([proc.pid], signal.SIGTERM)
            _signal_all([proc.pid], signal.SIGCONT)
        _signal_all(victims, signal.SIGTERM)
        _signal_all(victims, signal.SIGCONT)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        if sessions:
            deadline = time.monotonic() + 1.0
            while time.monotonic() < deadline and any(_alive(p) for p in victims):
                time.sleep(0.02)
            self._kill_until_gone(victims)
            self._orphans = []
        self._proc = None
        self._frozen = []
        if not self._orphans:  # else kill_all_started() must still end those connections
            _LIVE.discard(self)

    def kill(self) -> None:
        """SIGKILL the listener, every connection and every process the sessions started."""
        proc = self._proc
        victims = self._session_victims()
        if proc is not None and proc.poll() is None:
            proc.kill()
        _signal_all(victims, signal.SIGKILL)
        if proc is not None:
            proc.wait(5)
        self._kill_until_gone(victims)
        self._proc = None
        self._frozen = []
        self._orphans = []
        _LIVE.discard(self)

    def restart(self, timeout: float = START_TIMEOUT) -> SshdInstance:
        """stop() then start() on the SAME port with the current host key."""
        self.stop()
        return self.start(timeout)

    def freeze(self) -> None:
        """SIGSTOP the listener and every session process (and what the sessions started):
        open connections go silent (only keepalives notice), new ones connect but never see
        a banner. thaw() resumes."""
        if not self.is_running:
            raise SshdError(f"{self.name}: not running")
        pid = self._proc.pid
        frozen = [pid]
        os.kill(pid, signal.SIGSTOP)
        for _ in range(20):
            new = [p for p in descendants(pid) + marked_processes(str(self.dir)) if p not in frozen]
            if not new:
                break
            _signal_all(new, signal.SIGSTOP)
            frozen.extend(new)
        deadline = time.monotonic() + 2.0
        while _proc_state(pid) not in ("T", "t") and time.monotonic() < deadline:
            time.sleep(0.005)
        self._frozen = frozen

    def thaw(self) -> None:
        pids = list(self._frozen)
        if self.is_running:
            pids += [self._proc.pid] + descendants(self._proc.pid)
        _signal_all(pids, signal.SIGCONT)
        self._frozen = []

    def regenerate_host_key(self) -> str:
        """New host key (as when a provider re-creates an instance); restarts sshd on the same
        port if it was running. Returns the new fingerprint."""
        running = self.is_running
        if running:
            self.stop()
        self._write_host_key(new=True)
        if running:
            self.start()
        elif self._port is not None:
            self._write_known_hosts()
        return self.host_key_fingerprint

    def log_tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def __repr__(self) -> str:
        state = "running" if self.is_running else "stopped"
        port = self._port if self._port is not None else "-"
        return f"<SshdInstance {self.name} {self.host}:{port} {state} {self.capture}>"

    # ---- internals

    def _kill_until_gone(self, victims: list[int], timeout: float = 5.0) -> None:
        """SIGKILL ``victims`` and this instance's marked processes until none is left alive
        (a shell may fork between a scan and its signal; SIGKILL itself is asynchronous)."""

        def start_of(pid: int) -> bytes | None:
            fields = _proc_stat(pid)
            return fields[19] if fields else None

        known = {p: start_of(p) for p in victims}  # a pid counts only while it is the same process
        deadline = time.monotonic() + timeout
        while True:
            now = [p for p in known if known[p] is not None and start_of(p) == known[p]]
            alive = [p for p in dict.fromkeys(now + self._session_victims(include_tree=False)) if _alive(p)]
            if not alive:
                return
            if time.monotonic() > deadline:
                raise SshdError(f"{self.name}: processes survive SIGKILL: {alive}")
            _signal_all(alive, signal.SIGKILL)
            time.sleep(0.01)

    def _session_victims(self, include_tree: bool = True) -> list[int]:
        tree = descendants(self._proc.pid) if (include_tree and self._proc and self._proc.poll() is None) else []
        marked = marked_processes(str(self.dir))
        orphans = []
        for pid, start in self._orphans:  # still the same process (pid not reused)?
            fields = _proc_stat(pid)
            if fields and fields[19] == start:
                orphans.append(pid)
                orphans.extend(descendants(pid))
        frozen = [p for p in self._frozen if _alive(p)]
        return list(dict.fromkeys(tree + orphans + marked + frozen))

    def _write_state(self, name: str, value: str) -> None:
        self._write_file(self.nvsmi_dir / name, value)

    @staticmethod
    def _write_file(path: Path, value: str) -> None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(value + "\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)

    def _write_host_key(self, new: bool = False) -> None:
        if new or not self.host_key_path.exists():
            key = asyncssh.generate_private_key("ssh-ed25519")
            tmp = self.host_key_path.with_name("host_key.tmp")
            key.write_private_key(str(tmp))
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.host_key_path)
            key.write_public_key(str(self.host_key_path) + ".pub")
        self._host_key = asyncssh.read_private_key(str(self.host_key_path))

    def _write_known_hosts(self) -> None:
        self.known_hosts_path.write_text(self.host_public_key_line + "\n")
        os.chmod(self.known_hosts_path, 0o644)

    def _install_fakes(self, shutdown: bool = True) -> None:
        lib = self.dir / "lib"
        if not (lib / "sim").is_dir():  # the simulators the fakes run (gpu_tui/demo/sim), readable by all
            shutil.copytree(SIM_SRC, lib / "sim", ignore=shutil.ignore_patterns("__pycache__"))
        install_fake(
            FAKES_DIR / "nvidia-smi",
            self.bin_dir / "nvidia-smi",
            {
                "_BAKED_STATE_DIR": str(self.nvsmi_dir),
                "_BAKED_CAPTURES_DIR": str(self.root / "captures"),
                "_BAKED_LIB_DIR": str(lib),
            },
        )
        if shutdown:
            install_fake(FAKES_DIR / "shutdown", self.bin_dir / "shutdown", {"_BAKED_INSTANCE_DIR": str(self.dir)})

    def _make_home(self, user: str) -> None:
        home = self.home(user)
        home.mkdir(mode=0o700, exist_ok=True)
        (home / ".bashrc").write_text(BASHRC)
        (home / ".profile").write_text(PROFILE.format(bin=self.bin_dir))
        if user != ROOT_USER:
            pw = pwd.getpwnam(user)
            for p in (home, home / ".bashrc", home / ".profile"):
                os.chown(p, pw.pw_uid, pw.pw_gid)

    def _make_conda(self, user: str, location: str = "miniconda3") -> None:
        """A fake conda install at ``~/<location>``: base (python, conda) plus the default envs."""
        fake = fake_conda_module()
        root = self.home(user) / location
        conda = root / "bin" / "conda"
        python = fake_python()
        for d in ("bin", "condabin", "envs", "pkgs", "etc/profile.d"):
            (root / d).mkdir(parents=True)
        install_fake(
            FAKES_DIR / "conda",
            conda,
            {"_BAKED_STATE_DIR": str(self.conda_state_dir), "_BAKED_LIB_DIR": str(self.dir / "lib")},
        )
        os.symlink("../bin/conda", root / "condabin" / "conda")
        base = [f"python={fake.BASE_PYTHON}", f"conda={CONDA_VERSION}", "requests"]
        fake.make_prefix(str(root), base, argv=["install", "-y"] + base, python=python, conda_exe=str(conda))
        for name, py in CONDA_DEFAULT_ENVS:
            specs = [f"python={py}"]
            fake.make_prefix(
                str(root / "envs" / name),
                specs,
                argv=["create", "-n", name, "-y"] + specs,
                python=python,
                conda_exe=str(conda),
            )
        self._chown_tree(root, user)

    def _chown_tree(self, top: Path, user: str) -> None:
        if user == ROOT_USER:
            return
        pw = pwd.getpwnam(user)
        os.lchown(top, pw.pw_uid, pw.pw_gid)
        for dirpath, dirnames, filenames in os.walk(top):
            for n in dirnames + filenames:
                os.lchown(os.path.join(dirpath, n), pw.pw_uid, pw.pw_gid)

    def _setenv_line(self, user: str | None) -> str:
        env = {
            "PATH": f"{self.bin_dir}:{SBIN_PATH if user == ROOT_USER else USER_PATH}",
            "FAKE_NVSMI_DIR": str(self.nvsmi_dir),
            "GPU_TUI_SYSROOT": str(self.sys_dir),
            ENV_MARK: str(self.dir),
            "TMUX_TMPDIR": str(self.dir / "tmp"),
        }
        if user is not None:
            env["HOME"] = str(self.home(user))
        parts = []
        for k, v in env.items():
            if any(c in v for c in "\"'\\"):
                raise SshdError(f"cannot put {v!r} in sshd_config SetEnv")
            parts.append(f'"{k}={v}"' if any(c.isspace() for c in v) else f"{k}={v}")
        return "SetEnv " + " ".join(parts)

    def _write_config(self) -> None:
        lines = [
            f"# sshd_config of simulated instance {self.name!r}, written by tests/sshd.py",
            f"ListenAddress {self.host}",
            f"Port {self._port}",
            "AddressFamily inet",
            f"HostKey {self.host_key_path}",
            f"PidFile {self.dir / 'sshd.pid'}",
            # the shared test key, and ~/.ssh/authorized_keys in this instance's HOME as on a real
            # machine (where `gpu-tui add --install-key` puts the app key)
            f"AuthorizedKeysFile {self.root / 'authorized_keys'}/%u {self.dir / 'home'}/%u/.ssh/authorized_keys",
            "StrictModes no",
            "UsePAM no",
            "PubkeyAuthentication yes",
            "PasswordAuthentication yes",
            "KbdInteractiveAuthentication no",
            "PermitEmptyPasswords no",
            "PermitRootLogin yes",
            "MaxSessions 10",
            "ClientAliveInterval 0",
            "UseDNS no",
            "PrintMotd no",
            "PrintLastLog no",
            "LogLevel VERBOSE",
            f"Subsystem sftp internal-sftp -d {self.dir / 'home'}/%u",
        ]
        if sshd_version() >= (9, 8):
            # 9.8+ penalises a source address after failed auths / aborted handshakes: every
            # test connects from 127.0.0.1 and some fail on purpose.
            lines.append("PerSourcePenalties no")
        lines += self.extra_config
        for user in self.users:
            lines += [f"Match User {user}", "    " + self._setenv_line(user)]
        lines += ["Match all", "    " + self._setenv_line(None), ""]
        self.config_path.write_text("\n".join(lines))

    def _launch_argv(self) -> list[str]:
        sshd = [SSHD, "-D", "-e", "-f", str(self.config_path)]
        if not self.power_guard:
            return sshd
        script = ["#!/bin/sh", "# written by tests/sshd.py: private mount namespace, fake power tools", "set -e"]
        fake = self.bin_dir / "shutdown"
        for target in power_targets():
            script.append(f"mount --bind {shlex.quote(str(fake))} {shlex.quote(target)}")
        script.append("exec " + shlex.join(sshd))
        launch = self.dir / "launch.sh"
        launch.write_text("\n".join(script) + "\n")
        os.chmod(launch, 0o755)
        unshare = shutil.which("unshare", path=SBIN_PATH)
        return [unshare, "--mount", "--propagation", "private", "/bin/sh", str(launch)]

    def _spawn(self, timeout: float) -> None:
        self._write_config()
        with open(self.log_path, "ab") as log:
            self._log_offset = log.tell()
            log.write(f"---- start on port {self._port} at {time.strftime('%H:%M:%S')}\n".encode())
            log.flush()
            self._proc = subprocess.Popen(
                self._launch_argv(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
                env={"PATH": SBIN_PATH, "LANG": "C.UTF-8"},
                close_fds=True,
            )
        (self.dir / "listener.pid").write_text(f"{self._proc.pid}\n")
        deadline = time.monotonic() + timeout
        last_err: Exception | None = None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                self._proc = None
                raise SshdError(f"{self.name}: sshd exited at start:\n{self._log_since_start()}")
            try:
                read_banner(self.host, self._port, timeout=max(0.1, deadline - time.monotonic()))
                return
            except OSError as e:
                last_err = e
                time.sleep(0.02)
        proc, self._proc = self._proc, None
        proc.kill()
        proc.wait(5)
        raise SshdError(
            f"{self.name}: sshd not answering on {self.host}:{self._port} after {timeout}s "
            f"({last_err}):\n{self._log_since_start()}"
        )

    def _log_since_start(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(self._log_offset)
                return f.read().decode(errors="replace")[-4000:]
        except OSError:
            return ""


# ------------------------------------------------------------------------------ session

SESSION_PREFIX = "gpu-tui-sshd-"


def _owner_token(pid: int) -> str | None:
    fields = _proc_stat(pid)
    return f"{pid} {fields[19].decode()}" if fields else None


def sweep_stale_sessions(base: str = "/tmp") -> list[str]:
    """Kill what a crashed (SIGKILLed) earlier test run left behind and remove its root dir.

    A session root holds ``owner`` ("PID STARTTIME" of the process that made it); roots whose
    owner is gone are stale. Roots of live test runs (other checkouts on this machine) are left
    alone, and so are roots without an ``owner`` file. A listener is only killed if its command
    line names that root's sshd_config."""
    swept = []
    for root in sorted(Path(base).glob(SESSION_PREFIX + "*")):
        try:
            token = (root / "owner").read_text().strip()
            pid = int(token.split()[0])
        except (OSError, ValueError, IndexError):
            continue  # no owner recorded (being created, or made by other code): not ours to judge
        if _owner_token(pid) == token:
            continue  # its test run is alive
        for pidfile in root.glob("*/listener.pid"):
            try:
                pid = int(pidfile.read_text().strip())
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    cmdline = f.read()
            except (OSError, ValueError):
                continue
            if str(pidfile.parent / "sshd_config").encode() in cmdline:
                tree = descendants(pid)
                _signal_all([pid] + tree, signal.SIGKILL)
        _signal_all(marked_processes(str(root) + "/"), signal.SIGKILL)
        shutil.rmtree(root, ignore_errors=True)
        swept.append(str(root))
    return swept


class SshdSession:
    """A test session's root dir, client key, password user and the instances made in it."""

    def __init__(self, root: str | os.PathLike | None = None, *, password_user: bool = True) -> None:
        require_root()
        require_sshd()
        if root is None:
            import tempfile

            sweep_stale_sessions()
            root = tempfile.mkdtemp(prefix=SESSION_PREFIX, dir="/tmp")
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / "owner").write_text(f"{_owner_token(os.getpid())}\n")
        os.chmod(self.root, 0o755)  # the password user must reach its HOME and the fakes
        self.client_key = ensure_client_key(self.root)
        self.password_user = ensure_password_user() if password_user else None
        self.instances: list[SshdInstance] = []
        _ROOTS.add(str(self.root))

    def instance(self, name: str = "gpu", *, start: bool = True, **kw: Any) -> SshdInstance:
        """A new instance (a fresh dir even when the name was used before in this session)."""
        dir_name, n = name, 1
        while (self.root / dir_name).exists() or dir_name in ("captures", "authorized_keys"):
            n += 1
            dir_name = f"{name}-{n}"
        kw.setdefault("password_user", self.password_user)
        inst = SshdInstance(self.root, name, client_key=self.client_key, dir_name=dir_name, **kw)
        self.instances.append(inst)
        if start:
            inst.start()
        return inst

    def stop_all(self) -> None:
        for inst in self.instances:
            inst.kill()
        _signal_all(marked_processes(str(self.root) + "/"), signal.SIGKILL)

    def cleanup(self, remove: bool = True) -> None:
        self.stop_all()
        if remove and not os.environ.get("GPU_TUI_KEEP_SSHD_DIRS"):
            shutil.rmtree(self.root, ignore_errors=True)
