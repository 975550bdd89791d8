"""What monitors report: small immutable events, one kind per change, fed to a callback."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from gpu_tui.core.metrics.holders import HolderScan
from gpu_tui.core.models import GpuError, GpuFrame, GpuProcess, HostStats

__all__ = [
    "ConnState",
    "StateChanged",
    "GpuFrameReceived",
    "GpuErrorChanged",
    "ProcessesReceived",
    "HoldersReceived",
    "HostStatsReceived",
    "MonitorEvent",
]


class ConnState(enum.StrEnum):
    """An instance's connection state, in the words the dashboard shows (CONTRACTS.md)."""

    CONNECTING = "connecting"
    ONLINE = "online"
    OFFLINE = "offline"
    AUTH_FAILED = "auth failed"
    HOST_KEY_CHANGED = "host key changed"
    HOST_KEY_UNKNOWN = "unknown host key"
    STOPPED = "stopped"


@dataclass(frozen=True, slots=True)
class StateChanged:
    name: str
    state: ConnState
    message: str | None = None
    retry_at: float | None = None
    """Wall-clock time of the next reconnect attempt (offline only)."""
    fingerprint: str | None = None
    """The presented host key's SHA256 fingerprint (host-key states only)."""
    key_line: str | None = None
    """The presented key as `type base64`, to record if the user trusts it."""


@dataclass(frozen=True, slots=True)
class GpuFrameReceived:
    name: str
    frame: GpuFrame


@dataclass(frozen=True, slots=True)
class GpuErrorChanged:
    name: str
    error: GpuError | None


@dataclass(frozen=True, slots=True)
class ProcessesReceived:
    name: str
    processes: tuple[GpuProcess, ...]


@dataclass(frozen=True, slots=True)
class HoldersReceived:
    """Who holds each GPU's device file on the instance (the watch loop's scan)."""

    name: str
    scan: HolderScan


@dataclass(frozen=True, slots=True)
class HostStatsReceived:
    name: str
    stats: HostStats


MonitorEvent = (
    StateChanged | GpuFrameReceived | GpuErrorChanged | ProcessesReceived | HoldersReceived | HostStatsReceived
)
