"""Watch every process's argv while a test runs: a secret must never show up in a command line."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["argv_holding"]


@contextmanager
def argv_holding(secret: str | None) -> Iterator[list[str]]:
    """Yields the list of argvs (of any process) seen holding `secret` while the block ran;
    `None` watches nothing (the list stays empty)."""
    seen: list[str] = []
    stop = threading.Event()

    def scan() -> None:
        needle = (secret or "").encode()
        while not stop.is_set():
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    argv = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                if needle in argv:
                    seen.append(argv.decode(errors="replace"))
            time.sleep(0.02)

    scanner = threading.Thread(target=scan, daemon=True)
    if secret:
        scanner.start()
    try:
        yield seen
    finally:
        stop.set()
        if secret:
            scanner.join()
