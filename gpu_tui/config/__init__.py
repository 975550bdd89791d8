"""Configuration layer: settings from TOML (pydantic), user paths (platformdirs), secrets (keyring)."""

from gpu_tui.config.paths import Paths
from gpu_tui.config.settings import (
    InstanceConfig,
    Settings,
    SettingsSection,
    SyncConfig,
    load_settings,
)

__all__ = ["InstanceConfig", "Paths", "Settings", "SettingsSection", "SyncConfig", "load_settings"]
