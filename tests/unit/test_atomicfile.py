"""config/atomicfile.write_atomic: the mode is set before the first byte, a failure leaves the old
file and no temp file, and concurrent writers never produce a torn file."""

from __future__ import annotations

import errno
import os
import stat
import threading
import time
from pathlib import Path

import pytest

from gpu_tui.config import atomicfile
from gpu_tui.config.atomicfile import SECRET_MODE, fsync_directory, write_atomic


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_0():
    """A permissive umask: the modes below must come from write_atomic, not from the umask."""
    old = os.umask(0)
    yield
    os.umask(old)


def test_new_file_is_0600_and_gets_exactly_the_data(tmp_path: Path, umask_0) -> None:
    target = tmp_path / "known_hosts"
    write_atomic(target, "a\r\nb\n")
    assert target.read_bytes() == b"a\r\nb\n"  # text encoded, newlines untouched
    assert mode_of(target) == SECRET_MODE == 0o600
    assert os.listdir(tmp_path) == ["known_hosts"]


def test_existing_mode_is_kept_unless_one_is_given(tmp_path: Path, umask_0) -> None:
    target = tmp_path / "config.toml"
    target.write_text("old")
    target.chmod(0o640)
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and mode_of(target) == 0o640
    write_atomic(target, b"newer", mode=0o600)
    assert target.read_bytes() == b"newer" and mode_of(target) == 0o600
    write_atomic(tmp_path / "key.pub", b"ssh-ed25519 AAAA", mode=0o644)
    assert mode_of(tmp_path / "key.pub") == 0o644


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o644])
def test_mode_is_set_before_the_first_byte(tmp_path: Path, monkeypatch, umask_0, mode: int) -> None:
    seen: list[tuple[int, str]] = []
    real_write = os.write

    def watching_write(fd: int, data: bytes) -> int:
        st = os.fstat(fd)
        seen.append((stat.S_IMODE(st.st_mode), "empty" if st.st_size == 0 else "grown"))
        return real_write(fd, data[:4096])  # short writes: the loop must finish the job

    monkeypatch.setattr(atomicfile.os, "write", watching_write)
    write_atomic(tmp_path / "secret", b"k" * 10_000, mode=mode)
    assert seen[0] == (mode, "empty")  # the mode was already final when the first byte went in
    assert {m for m, _ in seen} == {mode} and len(seen) == 3
    assert (tmp_path / "secret").read_bytes() == b"k" * 10_000


def test_failure_mid_write_keeps_the_old_file_and_leaves_no_temp(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "config.toml"
    target.write_text("old contents")
    real_write = os.write
    calls = [0]

    def disk_full(fd: int, data: bytes) -> int:
        calls[0] += 1
        if calls[0] > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data[:5])

    monkeypatch.setattr(atomicfile.os, "write", disk_full)
    with pytest.raises(OSError, match="No space"):
        write_atomic(target, "brand new contents")
    assert target.read_text() == "old contents"
    assert os.listdir(tmp_path) == ["config.toml"]


@pytest.mark.parametrize("step", ["fsync", "replace", "fchmod"])
def test_failure_at_any_step_keeps_the_old_file(tmp_path: Path, monkeypatch, step: str) -> None:
    target = tmp_path / "config.toml"
    target.write_text("old contents")

    def boom(*_a: object, **_k: object) -> None:
        raise OSError(errno.EIO, f"{step} failed")

    monkeypatch.setattr(atomicfile.os, step, boom)
    with pytest.raises(OSError, match=f"{step} failed"):
        write_atomic(target, "new")
    monkeypatch.undo()
    assert target.read_text() == "old contents" and os.listdir(tmp_path) == ["config.toml"]


def test_interrupt_is_cleaned_up_too(tmp_path: Path, monkeypatch) -> None:
    def interrupted(*_a: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(atomicfile.os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(tmp_path / "f", "x")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_temp_name_is_unique_not_a_fixed_tmp(tmp_path: Path) -> None:
    # the old writers used `<name>.tmp`: one writer's temp was another's, and a stray file was clobbered
    (tmp_path / "known_hosts.tmp").write_text("someone else's")
    write_atomic(tmp_path / "known_hosts", "mine")
    assert (tmp_path / "known_hosts.tmp").read_text() == "someone else's"
    assert sorted(os.listdir(tmp_path)) == ["known_hosts", "known_hosts.tmp"]


def test_concurrent_writers_never_tear(tmp_path: Path, monkeypatch) -> None:
    real_write = os.write

    def small_writes(fd: int, data: bytes) -> int:
        # 4 KiB at a time and let the others run: writers interleave mid-file (a shared `.tmp`
        # name tears thousands of reads under this test)
        n = real_write(fd, data[:4096])
        time.sleep(0)
        return n

    monkeypatch.setattr(atomicfile.os, "write", small_writes)
    target = tmp_path / "state"
    size = 64 * 1024
    target.write_bytes(b"0" * size)
    writers, rounds = 6, 10
    stop = threading.Event()
    torn: list[str] = []
    errors: list[BaseException] = []

    def writer(k: int) -> None:
        try:
            for _ in range(rounds):
                write_atomic(target, bytes([ord("a") + k]) * size)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reader() -> None:
        while not stop.is_set():
            data = target.read_bytes()
            if len(data) != size or len(set(data)) != 1:
                torn.append(f"{len(data)} bytes, {len(set(data))} distinct")

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(writers)]
    readers = [threading.Thread(target=reader) for _ in range(2)]
    for t in readers + threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    for t in readers:
        t.join()
    assert not errors and not torn, (errors, torn[:5])
    final = target.read_bytes()
    assert len(final) == size and len(set(final)) == 1 and chr(final[0]) in "abcdef"
    assert os.listdir(tmp_path) == ["state"]


def test_directory_fsync_is_best_effort(tmp_path: Path, monkeypatch) -> None:
    opened: list[str] = []
    real_open = os.open

    def no_directories(path: str, flags: int, *a: int) -> int:
        if os.path.isdir(path):
            opened.append(str(path))
            raise PermissionError(errno.EACCES, "cannot open a directory here")  # as on Windows
        return real_open(path, flags, *a)

    monkeypatch.setattr(atomicfile.os, "open", no_directories)
    write_atomic(tmp_path / "f", "x")  # no error
    assert opened == [str(tmp_path)] and (tmp_path / "f").read_text() == "x"
    fsync_directory(tmp_path / "missing")  # nor for a directory that is not there
