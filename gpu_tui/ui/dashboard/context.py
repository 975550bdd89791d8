"""What the dashboard's key handlers need from the dashboard, as one small protocol.

The job, power, instance and shell handlers are typed against this instead of the App or the
screen class, so none of them imports the module that imports them.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

from textual.app import App
from textual.notifications import SeverityLevel
from textual.screen import Screen

from gpu_tui.services.fleet import Fleet, InstanceView
from gpu_tui.ui.kept import KeptScreen
from gpu_tui.ui.source import FleetSource, Opened

__all__ = ["DashboardContext", "Kept"]

Kept = TypeVar("Kept", bound=KeptScreen)


class DashboardContext(Protocol):
    """The dashboard screen as its handlers see it."""

    source: FleetSource
    clock: Callable[[], float]

    @property
    def app(self) -> App[Any]: ...

    @property
    def fleet(self) -> Fleet | None: ...

    @property
    def opened(self) -> Opened | None: ...

    @property
    def currency(self) -> str: ...

    def selected(self) -> InstanceView | None: ...

    def key_for(self, action_id: str) -> str:
        """The key that runs the action (the user's remap, else the default), in Textual's names."""
        ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def push(self, screen: Screen[Any], callback: Callable[[Any], None] | None = None) -> None: ...

    def kept(self, name: str, make: Callable[[], Kept]) -> Kept:
        """The screen kept under `name`, made by `make` the first time: a screen opened often is
        composed once and shown again (composing it cost a third of the key's latency)."""
        ...

    def start(self, work: Coroutine[Any, Any, None], *, group: str) -> None:
        """Run `work` as a worker whose failure is reported, never closing the dashboard."""
        ...

    def repaint(self, name: str) -> None:
        """Show the instance's row (and panels, when selected) now."""
        ...
