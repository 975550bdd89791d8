"""Key bindings and Textual's own words in the language in force.

A `Binding`'s description is fixed when its class is made, at import, in English; the footer
reads the copy of the bindings each node holds, made when the node is. `translate_bindings`
replaces that copy with one whose descriptions are translated, once per node: the footer then
renders the words as they are, with no look-up per frame.
"""

from __future__ import annotations

from dataclasses import replace

from textual.app import SystemCommand
from textual.binding import Binding, BindingsMap
from textual.dom import DOMNode

from gpu_tui.core.i18n import N_, _

__all__ = ["TEXTUAL_WORDS", "system_command", "translate_binding", "translate_bindings"]

TEXTUAL_WORDS = (
    # the App's and Screen's bindings
    N_("palette"),
    N_("Open the command palette"),
    N_("Quit"),
    N_("Quit the app and return to the command prompt."),
    # the palette's own commands (App.get_system_commands)
    N_("Theme"),
    N_("Change the current theme"),
    N_("Quit the application as soon as possible"),
    N_("Keys"),
    N_("Hide the keys and widget help panel"),
    N_("Show help for the focused widget and a summary of available keys"),
    N_("Minimize"),
    N_("Minimize the widget and restore to normal size"),
    N_("Maximize"),
    N_("Maximize the focused widget"),
    N_("Screenshot"),
    N_("Save an SVG 'screenshot' of the current screen"),
    N_("Search for commands…"),
)
"""The words Textual itself shows on the dashboard (the footer's palette key, the command
palette), marked here so the catalog has them; a word Textual changes stays English."""


def _tr(text: str) -> str:
    return _(text) if text else text  # gettext("") is the catalog's header


def translate_binding(binding: Binding) -> Binding:
    return replace(binding, description=_tr(binding.description), tooltip=_tr(binding.tooltip))


def translate_bindings(node: DOMNode) -> None:
    """Give `node` (a screen, the app) translated copies of its bindings; call it in `__init__`,
    before the app applies the user's keymap (which works on the copy, by binding id)."""
    held: BindingsMap = node._bindings
    node._bindings = BindingsMap.from_keys(
        {key: [translate_binding(b) for b in bindings] for key, bindings in held.key_to_bindings.items()}
    )


def system_command(command: SystemCommand) -> SystemCommand:
    """A palette entry with its title and help translated."""
    return command._replace(title=_tr(command.title), help=_tr(command.help))
