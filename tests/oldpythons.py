"""Old python3 interpreters (3.6 to 3.10) for the code gpu-tui ships to instances: the
notification sender and its log rules must run on the old python3 of a rented image.

Where they come from, in this order:

- ``GPU_TUI_TEST_OLD_PYTHONS``: interpreter paths, separated by ``os.pathsep`` (``:``). Each one
  must run and be 3.6 to 3.10; one that is not is an error (a test that uses it fails and says
  why), never a quiet skip.
- ``python3.6`` ... ``python3.10`` found on PATH that run (a pyenv shim of a version that is not
  selected does not).

None found: the tests that need one skip, saying how to provide one. Debian 12 packages none,
so .ci/run passes pyenv's where the machine has pyenv.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess

import pytest

ENV = "GPU_TUI_TEST_OLD_PYTHONS"
OLDEST, NEWEST = (3, 6), (3, 10)
NAMES = tuple(f"python3.{minor}" for minor in range(OLDEST[1], NEWEST[1] + 1))
SKIP = (
    f"no old python3 (3.6-3.10) to run the instance-side code on: set {ENV}=/path/to/python3.6 "
    f"or put one of {', '.join(NAMES)} on PATH"
)

__all__ = ["ENV", "old_pythons", "oldest_python", "require_old_python", "version_of"]


def version_of(python: str) -> tuple[int, int] | None:
    try:
        res = subprocess.run(
            [python, "-c", "import sys; print('%d %d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError:  # missing, not executable, or in a dir this user cannot enter
        return None
    if res.returncode != 0:
        return None
    major, minor = res.stdout.split()
    return int(major), int(minor)


@functools.cache
def old_pythons() -> tuple[str, ...]:
    """Working old interpreters, oldest first (one per version)."""
    found: dict[tuple[int, int], str] = {}
    for python in filter(None, os.environ.get(ENV, "").split(os.pathsep)):
        version = version_of(python)
        if version is None or not OLDEST <= version <= NEWEST:
            raise RuntimeError(
                f"{ENV}: {python} is not a working python {OLDEST[0]}.{OLDEST[1]} to "
                f"{NEWEST[0]}.{NEWEST[1]} (it reads {version})"
            )
        found.setdefault(version, python)
    for name in NAMES:
        python = shutil.which(name)
        version = version_of(python) if python else None
        if python and version is not None and OLDEST <= version <= NEWEST:
            found.setdefault(version, python)
    return tuple(found[v] for v in sorted(found))


def oldest_python() -> str | None:
    pythons = old_pythons()
    return pythons[0] if pythons else None


def require_old_python() -> tuple[str, ...]:
    """The old interpreters, or skip the calling test saying how to provide one."""
    pythons = old_pythons()
    if not pythons:
        pytest.skip(SKIP)
    return pythons
