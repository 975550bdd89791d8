"""`StableFooter`: Textual's Footer, rebuilt only when the keys it shows change.

Textual's Footer recomposes (one widget per key, mounted and styled afresh) on every bindings
update. On the dashboard that update comes whenever the selection moves between an instance
with a job and one without (`l` and `x` dim or light up): measured in-process, a `j` press took
204 ms with the recompose and 85 ms without. Here a key that only turns enabled or disabled is
restyled in place; the footer is rebuilt only when a key appears, goes or is renamed.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

__all__ = ["StableFooter"]

_Shape = tuple[tuple[str, str, str], ...]


def _shape_and_states(screen: Screen[object]) -> tuple[_Shape, dict[str, bool]]:
    """What the footer lays out (key, action, description per shown binding), and each action's
    enabled state."""
    shape: list[tuple[str, str, str]] = []
    enabled: dict[str, bool] = {}
    for _node, binding, on, _tooltip in screen.active_bindings.values():
        if binding.show or binding.key == screen.app.COMMAND_PALETTE_BINDING:
            shape.append((binding.key, binding.action, binding.description))
            enabled[binding.action] = on
    return tuple(shape), enabled


class StableFooter(Footer):
    _shape: _Shape | None = None
    """The layout composed last (None: not yet)."""

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._shape = _shape_and_states(self.screen)[0]
        yield from super().compose()

    def bindings_changed(self, screen: Screen[object]) -> None:
        if self._shape is not None and self.is_attached and screen is self.screen and screen.app.app_focus:
            shape, enabled = _shape_and_states(screen)
            if shape == self._shape:
                for key in self.query(FooterKey):
                    on = enabled.get(key.action, not key._disabled)
                    key._disabled = not on  # what a click checks
                    key.set_class(not on, "-disabled")
                return
        super().bindings_changed(screen)
