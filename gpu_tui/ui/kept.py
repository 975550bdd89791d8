"""A screen the dashboard keeps installed and pushes again for each key (detail, the log screen).

Textual re-applies the stylesheet to a pushed screen's whole tree on every push, in case the
app's styling changed while it was away. For the log screen that was 4.7 of the 17 ms from `l`
to its first paint, repeated on every open although nothing had changed. A kept screen notes
what its styles were worked out against when it leaves, and skips the re-application when that
is all the same on its return; a theme picked meanwhile, light or dark, the terminal's focus or
the app's classes still bring it back.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.screen import Screen

__all__ = ["KeptScreen", "styling_of"]


def styling_of(app: App[Any]) -> tuple[object, ...]:
    """What a screen's styles depend on outside the screen itself (its own classes and pseudo
    classes are re-applied by Textual as they change, shown or not)."""
    # _css_update_count: Textual counts every change of CSS (a theme, its variables, a reload)
    return (app._css_update_count, app.theme, app.pseudo_classes, app.classes)


class KeptScreen(Screen[None]):
    """Shown again and again: its styles are re-applied on a push only when the app's changed."""

    _styled_as: tuple[object, ...] | None = None

    def _on_screen_suspend(self) -> None:
        super()._on_screen_suspend()
        self._styled_as = styling_of(self.app)

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        if event.refresh_styles and self._styled_as == styling_of(self.app):
            event.refresh_styles = False
        super()._on_screen_resume(event)
