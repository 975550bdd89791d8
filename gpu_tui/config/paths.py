"""Where gpu-tui keeps its files on this machine (platformdirs); nothing is created at import time."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = ["APP_NAME", "Paths", "default_config_path"]

APP_NAME = "gpu-tui"


def default_config_path() -> Path:
    """`GPU_TUI_CONFIG` if set, else `user_config_dir("gpu-tui")/config.toml` (CONTRACTS.md)."""
    env = os.environ.get("GPU_TUI_CONFIG")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME)) / "config.toml"


@dataclass(frozen=True)
class Paths:
    """Every local path the app reads or writes; tests build one pointing into a temp dir."""

    config_file: Path
    data_dir: Path
    log_dir: Path
    ssh_config: Path
    user_known_hosts: Path
    cache_dir: Path | None = None
    """What can be fetched again (None: `data_dir/cache`, so a test's Paths stay in its temp dir)."""

    @property
    def app_known_hosts(self) -> Path:
        """Host keys the user accepted inside gpu-tui (never ~/.ssh/known_hosts, which we only read)."""
        return self.data_dir / "known_hosts"

    @property
    def app_key(self) -> Path:
        """gpu-tui's own SSH key (ed25519), installed on instances at the user's request so
        later logins and rsync need no password. Its public half is `app_key` + `.pub`."""
        return self.data_dir / "id_ed25519"

    @property
    def ledger_file(self) -> Path:
        """The cost ledger (SQLite, WAL): billing intervals per instance, kept across restarts."""
        return self.data_dir / "ledger.sqlite3"

    @property
    def series_cache(self) -> Path:
        """Copies of jobs' series files (`gpu-tui metrics`), per instance and job."""
        return (self.cache_dir or self.data_dir / "cache") / "series"

    @property
    def log_file(self) -> Path:
        return self.log_dir / "gpu-tui.log"

    @classmethod
    def default(cls, config_file: Path | None = None) -> Paths:
        home = Path.home()
        return cls(
            config_file=config_file or default_config_path(),
            data_dir=Path(platformdirs.user_data_dir(APP_NAME)),
            log_dir=Path(platformdirs.user_log_dir(APP_NAME)),
            ssh_config=home / ".ssh" / "config",
            user_known_hosts=home / ".ssh" / "known_hosts",
            cache_dir=Path(platformdirs.user_cache_dir(APP_NAME)),
        )
