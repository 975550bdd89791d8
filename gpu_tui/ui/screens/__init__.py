"""Dashboard screens, one per module."""

from gpu_tui.ui.screens.detail import DetailScreen
from gpu_tui.ui.screens.help import HelpScreen
from gpu_tui.ui.screens.hostkey import TrustKeyScreen
from gpu_tui.ui.screens.password import PasswordAnswer, PasswordScreen
from gpu_tui.ui.screens.welcome import WelcomeScreen

__all__ = [
    "DetailScreen",
    "HelpScreen",
    "PasswordAnswer",
    "PasswordScreen",
    "TrustKeyScreen",
    "WelcomeScreen",
]
