"""Host-key trust: read ~/.ssh/known_hosts and the app's own file, record keys the user accepts.

asyncssh never writes known_hosts and, given a lookup function, tells us nothing about *why* a
key was refused; `KnownHosts.lookup` remembers whether any key was known for the host so the
caller can tell `unknown host key` from `host key changed` (CONTRACTS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import asyncssh

from gpu_tui.config.atomicfile import SECRET_MODE, write_atomic

__all__ = ["KnownHosts", "host_pattern", "fingerprint"]

KnownHostsMatch = tuple[
    Sequence[asyncssh.SSHKey],  # trusted host keys
    Sequence[asyncssh.SSHKey],  # trusted CA keys
    Sequence[asyncssh.SSHKey],  # revoked keys
    Sequence[object],  # trusted X.509 certificates (asyncssh does not export their class)
    Sequence[object],  # revoked X.509 certificates
    Sequence[object],  # trusted X.509 subject names
    Sequence[object],  # revoked X.509 subject names
]
"""What `asyncssh.SSHKnownHosts.match` returns (its own alias for it is private)."""


def host_pattern(host: str, port: int) -> str:
    """The known_hosts spelling of a host: `host` on port 22, else `[host]:port`."""
    return host if port == 22 else f"[{host}]:{port}"


def fingerprint(key: asyncssh.SSHKey) -> str:
    """`SHA256:...`, as `ssh-keygen -l` prints it."""
    return key.get_fingerprint("sha256")


class KnownHosts:
    """The union of the user's known_hosts (read only) and the app's (read and appended)."""

    def __init__(self, user_file: Path, app_file: Path) -> None:
        self.user_file = user_file
        self.app_file = app_file

    def _load(self) -> asyncssh.SSHKnownHosts:
        text = ""
        for path in (self.user_file, self.app_file):
            try:
                text += path.read_text(encoding="utf-8", errors="replace") + "\n"
            except OSError:
                continue
        return asyncssh.import_known_hosts(text)

    def lookup(self, host: str, addr: str, port: int | None) -> KnownHostsMatch:
        """The match tuple asyncssh expects (host keys, CA keys, revoked, x509...)."""
        return self._load().match(host, addr, port)

    def has_keys_for(self, host: str, addr: str, port: int | None) -> bool:
        result = self.lookup(host, addr, port)
        return bool(result[0]) or bool(result[1])

    def is_known(self, host: str, port: int, key_line: str) -> bool:
        """Whether `key_line` is a trusted key for host:port."""
        try:
            key = asyncssh.import_public_key(key_line)
        except (asyncssh.KeyImportError, ValueError):
            return False
        wanted = fingerprint(key)
        return any(fingerprint(k) == wanted for k in self.lookup(host, host, port if port != 22 else None)[0])

    def trust(self, host: str, port: int, key_line: str) -> None:
        """Record `key_line` (`ssh-ed25519 AAAA...`) for host:port, replacing older app entries."""
        pattern = host_pattern(host, port)
        self.app_file.parent.mkdir(parents=True, exist_ok=True)
        try:
            old = self.app_file.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            old = []
        kept = [line for line in old if line.split(" ", 1)[0] != pattern]
        kept.append(f"{pattern} {key_line.strip()}")
        write_atomic(self.app_file, "\n".join(kept) + "\n", mode=SECRET_MODE)
