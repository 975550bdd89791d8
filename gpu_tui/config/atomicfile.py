"""Replace a local file atomically: readers see the old bytes or the new ones, never a mix.

The one writer for gpu-tui's own files (the config, known hosts, its SSH key). A temp file with
a unique name (tempfile.mkstemp) in the target's directory gets its mode first, so a secret is
never readable by others, not even for its first byte; then the data is written, fsync'd and
renamed over the target with os.replace, and the directory is fsync'd so the rename itself
survives a crash (best effort where a directory cannot be opened, e.g. Windows). On any
failure the temp file is removed and the target is left as it was.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["SECRET_MODE", "write_atomic", "fsync_directory"]

SECRET_MODE = 0o600
"""The mode of a new file when none is given: only the user reads it (configs name hosts and
users, known hosts say where the user logs in, keys are keys)."""


def write_atomic(
    path: str | os.PathLike[str], data: bytes | str, *, mode: int | None = None, encoding: str = "utf-8"
) -> None:
    """Write `data` (text is encoded with `encoding`, newlines untouched) to `path` atomically.

    `mode`: the file's permission bits; None keeps those of the file being replaced, or
    SECRET_MODE (0o600) for a new file. The directory must exist. Raises OSError (the target
    unchanged, no temp file left behind)."""
    target = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else bytes(data)
    if mode is None:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = SECRET_MODE
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            _set_mode(fd, tmp, mode)  # before the first byte: the data is never readable under another mode
            view = memoryview(payload)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            # unbuffered os.write: nothing to flush in Python; fsync flushes the kernel's copy
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    fsync_directory(target.parent)


def _set_mode(fd: int, tmp: str, mode: int) -> None:
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    else:  # Windows before Python 3.13: only the read-only bit means anything there
        os.chmod(tmp, mode)


def fsync_directory(directory: str | os.PathLike[str]) -> None:
    """Make a rename in `directory` durable; silently skipped where a directory cannot be opened
    or fsync'd (Windows, some filesystems)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
