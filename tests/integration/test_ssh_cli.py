"""`gpu-tui ssh NAME [-t] [-- CMD...]` end to end against real sshd: one command (exit code,
literal words, byte streams, stdin), the interactive shell on a real local pty (size, TERM,
resize, raw mode restored, link drop), host keys, password logins."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from sshhelp import cli_env, config_text

from gpu_tui.config.secrets import env_var_name

pytestmark = pytest.mark.sshd


# ------------------------------------------------------------------------------ helpers


def prepare(
    tmp: Path,
    config: str,
    known_hosts: str,
    *args: str,
    env: dict[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """argv and environment of `python -m gpu_tui --config <tmp config> ARGS...`, isolated as
    sshhelp.run_gpu_tui does it (own XDG dirs and HOME, no keyring)."""
    cfg = tmp / "config.toml"
    cfg.write_text(config)
    full = cli_env(tmp, known_hosts=known_hosts)
    full.update(env or {})
    return [sys.executable, "-m", "gpu_tui", "--config", str(cfg), *args], full


def key_setup(tmp: Path, inst: object, *args: str, **kw: object) -> tuple[list[str], dict[str, str]]:
    return prepare(tmp, config_text([inst]), f"{inst.host_public_key_line}\n", *args, **kw)  # type: ignore[attr-defined]


def password_config(inst: object, user: str) -> str:
    return (
        "[settings]\nconnect_timeout_seconds = 3.0\n\n[[instances]]\n"
        f'name = "pw-box"\nhost = "{inst.host}"\nport = {inst.port}\nuser = "{user}"\n'  # type: ignore[attr-defined]
    )


def run(
    argv: list[str], env: dict[str, str], stdin: bytes | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        argv,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=timeout,
    )


def set_size(fd: int, rows: int, cols: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


class PtyChild:
    """A child whose stdin/stdout/stderr are a fresh pty's slave (its controlling terminal)."""

    def __init__(self, argv: list[str], env: dict[str, str], rows: int = 24, cols: int = 80) -> None:
        self.master, self.slave = os.openpty()
        set_size(self.slave, rows, cols)
        self.before = termios.tcgetattr(self.slave)
        self.out = b""
        self.proc = subprocess.Popen(
            argv,
            stdin=self.slave,
            stdout=self.slave,
            stderr=self.slave,
            env=env,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )

    def _read(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            chunk = os.read(self.master, 65536)
        except OSError:
            return False
        self.out += chunk
        return bool(chunk)

    def read_until(self, pred: Callable[[bytes], bool], timeout: float = 20.0) -> None:
        end = time.monotonic() + timeout
        while not pred(self.out):
            if time.monotonic() > end:
                raise AssertionError(f"not seen within {timeout}s; output so far: {self.out!r}")
            self._read(0.1)

    def write(self, data: bytes) -> None:
        os.write(self.master, data)

    def wait(self, timeout: float = 20.0) -> int:
        end = time.monotonic() + timeout
        while self.proc.poll() is None:
            if time.monotonic() > end:
                raise AssertionError(f"still running after {timeout}s; output: {self.out!r}")
            self._read(0.1)
        while self._read(0.2):
            pass
        return self.proc.returncode

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        os.close(self.master)
        os.close(self.slave)


PROMPT = re.compile(rb"[#$] ?$")


def at_prompt(buf: bytes) -> bool:
    return bool(PROMPT.search(buf.rstrip(b" ")[-200:] + b" ")) if buf else False


# ------------------------------------------------------------------------------ one command


def test_command_exit_code_and_separate_streams(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "--", "echo hi; echo oops >&2; exit 7")
    res = run(argv, env)
    assert res.returncode == 7, res.stderr
    assert res.stdout == b"hi\n"
    assert res.stderr == b"oops\n"


def test_command_killed_by_a_signal_exits_128_plus_n(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "--", "echo before; kill -TERM $$")
    res = run(argv, env)
    assert (res.returncode, res.stdout) == (128 + signal.SIGTERM, b"before\n"), res.stderr


def test_several_words_arrive_literally(sshd_instance, tmp_path: Path) -> None:
    words = ["printf", "%s|", "a; b", "$(echo x)", "it's", "`id`", "two\nlines", "*"]
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "--", *words)
    res = run(argv, env)
    assert res.returncode == 0, res.stderr
    assert res.stdout == b"a; b|$(echo x)|it's|`id`|two\nlines|*|"


def test_output_is_bytes_unchanged(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(
        tmp_path, sshd_instance, "ssh", sshd_instance.name, "--", r"printf '\377\000\001\r\n\033[31m'"
    )
    res = run(argv, env)
    assert res.returncode == 0, res.stderr
    assert res.stdout == b"\xff\x00\x01\r\n\x1b[31m"


def test_stdin_is_piped_to_the_command(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "--", "cat")
    res = run(argv, env, stdin=b"hi\n")
    assert (res.returncode, res.stdout) == (0, b"hi\n"), res.stderr
    big = os.urandom(3_000_000)
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "--", "sha256sum")
    res = run(argv, env, stdin=big)
    import hashlib

    assert res.returncode == 0, res.stderr
    assert res.stdout.split()[0].decode() == hashlib.sha256(big).hexdigest()


def test_stdin_from_a_regular_file(sshd_instance, tmp_path: Path) -> None:
    src = tmp_path / "in.txt"
    src.write_bytes(b"from a file\n")
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "--", "cat")
    with src.open("rb") as f:
        res = subprocess.run(argv, stdin=f, capture_output=True, env=env, timeout=60)
    assert (res.returncode, res.stdout) == (0, b"from a file\n"), res.stderr


def test_output_streams_as_it_comes(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "--", "echo first; sleep 4; echo second")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        t0 = time.monotonic()
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"first\n"
        assert time.monotonic() - t0 < 3.5, "the first line waited for the command to end"
        assert proc.wait(30) == 0
        assert proc.stdout.read() == b"second\n"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_empty_command_after_dashdash_is_refused(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "--")
    res = run(argv, env)
    assert res.returncode == 2
    assert b"nothing after `--`" in res.stderr


def test_unreachable_is_one_line_exit_3(sshd_factory, tmp_path: Path) -> None:
    inst = sshd_factory("down")
    inst.stop()
    argv, env = key_setup(tmp_path, inst, "ssh", inst.name, "--", "true")
    res = run(argv, env)
    assert res.returncode == 3
    err = res.stderr.decode()
    assert err.count("\n") == 1 and "unreachable" in err and "Traceback" not in err, err
    assert res.stdout == b""


def test_unknown_host_key_is_refused_with_how_to_trust(sshd_instance, tmp_path: Path) -> None:
    argv, env = prepare(tmp_path, config_text([sshd_instance]), "", "ssh", sshd_instance.name, "--", "echo ran")
    res = run(argv, env)
    assert res.returncode == 3
    err = res.stderr.decode()
    assert "unknown host key" in err and sshd_instance.host_key_fingerprint in err
    assert "trust it" in err and "Traceback" not in err
    assert res.stdout == b""


def test_changed_host_key_is_refused(sshd_instance, tmp_path: Path) -> None:
    old_line = sshd_instance.host_public_key_line
    sshd_instance.regenerate_host_key()
    argv, env = prepare(
        tmp_path, config_text([sshd_instance]), f"{old_line}\n", "ssh", sshd_instance.name, "--", "echo ran"
    )
    res = run(argv, env)
    assert res.returncode == 3
    assert "host key changed" in res.stderr.decode()
    assert res.stdout == b""


# ------------------------------------------------------------------------------ interactive shell


def test_interactive_shell_size_term_resize_exit_code_and_raw_mode_restored(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, env={"TERM": "vt220"})
    child = PtyChild(argv, env, rows=33, cols=101)
    try:
        child.read_until(at_prompt)
        child.write(b"stty size; echo T=$TERM\n")
        child.read_until(lambda b: b"T=vt220" in b)
        assert b"33 101" in child.out
        mark = len(child.out)
        # the local window changes: the remote pty follows
        set_size(child.slave, 41, 117)
        os.kill(child.proc.pid, signal.SIGWINCH)
        time.sleep(0.5)
        child.write(b"stty size; exit 5\n")
        assert child.wait() == 5, child.out
        assert b"41 117" in child.out[mark:]
        assert termios.tcgetattr(child.slave) == child.before
    finally:
        child.close()


def test_ctrl_c_goes_to_the_remote_side(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name)
    child = PtyChild(argv, env)
    try:
        child.read_until(at_prompt)
        child.write(b"sleep 30\n")
        time.sleep(0.5)
        child.write(b"\x03")  # raw mode: a byte for the remote pty, not SIGINT for us
        time.sleep(0.5)
        child.write(b"echo still-here; exit 0\n")
        assert child.wait() == 0, child.out
        assert b"still-here" in child.out
        assert termios.tcgetattr(child.slave) == child.before
    finally:
        child.close()


def test_link_drop_ends_with_exit_3_and_the_terminal_restored(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name)
    child = PtyChild(argv, env)
    try:
        child.read_until(at_prompt)
        sshd_instance.stop()  # ends every connection
        assert child.wait(30) == 3, child.out
        assert b"connection lost" in child.out
        assert b"Traceback" not in child.out
        assert termios.tcgetattr(child.slave) == child.before
    finally:
        child.close()


def test_sigterm_ends_the_session_with_the_terminal_restored(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name)
    child = PtyChild(argv, env)
    try:
        child.read_until(at_prompt)
        assert termios.tcgetattr(child.slave) != child.before  # raw while the shell runs
        child.proc.send_signal(signal.SIGTERM)
        assert child.wait() == 128 + signal.SIGTERM, child.out
        assert b"Traceback" not in child.out
        assert termios.tcgetattr(child.slave) == child.before
    finally:
        child.close()


def test_command_with_t_gets_a_pty(sshd_instance, tmp_path: Path) -> None:
    argv, env = key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "-t", "--", "tty; stty size")
    child = PtyChild(argv, env, rows=20, cols=70)
    try:
        assert child.wait() == 0, child.out
        assert b"/dev/pts/" in child.out and b"20 70" in child.out
        assert termios.tcgetattr(child.slave) == child.before
    finally:
        child.close()
    res = run(*key_setup(tmp_path, sshd_instance, "ssh", sshd_instance.name, "--", "tty"))
    assert res.stdout.strip() == b"not a tty"


# ------------------------------------------------------------------------------ passwords


def cmdlines() -> list[bytes]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                out.append(Path(f"/proc/{entry}/cmdline").read_bytes())
            except OSError:
                pass
    return out


def test_password_from_the_env_var_never_in_a_cmdline(sshd_instance, password_user, tmp_path: Path) -> None:
    argv, env = prepare(
        tmp_path,
        password_config(sshd_instance, password_user.name),
        f"{sshd_instance.host_public_key_line}\n",
        "ssh",
        "pw-box",
        "--",
        "echo started; sleep 2; whoami",
        env={env_var_name("pw-box"): password_user.password},
    )
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"started\n"
        secret = password_user.password.encode()
        assert not [c for c in cmdlines() if secret in c]
        assert proc.wait(30) == 0
        assert proc.stdout.read() == f"{password_user.name}\n".encode()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_refused_login_asks_for_the_password_once_on_a_terminal(sshd_instance, password_user, tmp_path: Path) -> None:
    argv, env = prepare(
        tmp_path,
        password_config(sshd_instance, password_user.name),
        f"{sshd_instance.host_public_key_line}\n",
        "ssh",
        "pw-box",
        "--",
        "echo logged-in-as-$(whoami)",
    )
    child = PtyChild(argv, env)
    try:
        child.read_until(lambda b: b"password for" in b)
        child.write(password_user.password.encode() + b"\n")
        assert child.wait(30) == 0, child.out
        assert f"logged-in-as-{password_user.name}".encode() in child.out
        assert password_user.password.encode() not in child.out  # not echoed
    finally:
        child.close()
    # no terminal: no question, the refusal is the answer
    res = run(argv, env)
    assert res.returncode == 3
    assert b"auth failed" in res.stderr and b"password for" not in res.stderr
