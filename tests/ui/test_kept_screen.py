"""A kept screen skips Textual's restyling of its whole tree on a push when nothing it depends on
changed, and is restyled when something did (a theme, the terminal's focus, the app's classes)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.color import Color
from textual.dom import DOMNode
from textual.widgets import Static

from gpu_tui.ui.kept import KeptScreen


class Shown(KeptScreen):
    def compose(self) -> ComposeResult:
        yield Static("box", id="box")


class Host(App[None]):
    # the app's CSS, not the screen's DEFAULT_CSS: Textual scopes that to selectors under the screen
    CSS = """
    Shown #box { background: $primary; }
    App:blur Shown #box { background: #ff0000; }
    App.-marked Shown #box { background: #00ff00; }
    """

    def on_mount(self) -> None:
        self.install_screen(Shown(), name="kept")


def _counting(monkeypatch: pytest.MonkeyPatch, app: App[Any]) -> list[int]:
    """How many nodes each stylesheet update of the kept screen's tree touched."""
    counts: list[int] = []
    real = app.stylesheet.update_nodes

    def update_nodes(nodes: Iterable[DOMNode], animate: bool = False) -> None:
        nodes = list(nodes)
        if any(isinstance(n, Shown) for n in nodes):
            counts.append(len(nodes))
        real(nodes, animate=animate)

    monkeypatch.setattr(app.stylesheet, "update_nodes", update_nodes)
    return counts


def _box(app: App[Any]) -> Color:
    return app.screen.query_one("#box", Static).styles.background


async def _there_and_back(app: App[Any], pilot: Any) -> None:
    await app.push_screen("kept")
    await pilot.pause()
    app.pop_screen()
    await pilot.pause()


async def test_a_second_push_with_nothing_changed_restyles_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    app = Host()
    async with app.run_test() as pilot:
        await _there_and_back(app, pilot)
        counts = _counting(monkeypatch, app)
        await app.push_screen("kept")
        await pilot.pause()
        assert isinstance(app.screen, Shown)
        assert counts == []  # Textual's ScreenResume would restyle the screen and its box
        assert _box(app) == Color.parse(app.current_theme.primary)


async def test_a_theme_picked_while_away_restyles_it_on_return(monkeypatch: pytest.MonkeyPatch) -> None:
    app = Host()
    async with app.run_test() as pilot:
        app.theme = "textual-dark"
        await _there_and_back(app, pilot)
        was = app.get_screen("kept").query_one("#box", Static).styles.background
        app.theme = "nord"
        await pilot.pause()
        counts = _counting(monkeypatch, app)
        await app.push_screen("kept")
        await pilot.pause()
        assert counts, "the theme changed while the screen was away"
        assert _box(app) == Color.parse(app.current_theme.primary) != was


@pytest.mark.parametrize("change", ["blur", "class"])
async def test_the_apps_focus_or_classes_changed_while_away_restyle_it(change: str) -> None:
    app = Host()
    async with app.run_test() as pilot:
        await _there_and_back(app, pilot)
        if change == "blur":
            app.app_focus = False
        else:
            app.add_class("-marked")
        await pilot.pause()
        await app.push_screen("kept")
        await pilot.pause()
        assert _box(app) == Color.parse("#ff0000" if change == "blur" else "#00ff00")
