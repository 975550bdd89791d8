"""The dashboard screen and the handlers of its keys."""

from gpu_tui.ui.dashboard.screen import AVAILABLE, DashboardScreen

__all__ = ["AVAILABLE", "DashboardScreen"]
