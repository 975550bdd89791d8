"""LogView paints what Textual's Log paints, working its style out once a paint, not once a line."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.dom import DOMNode
from textual.geometry import Region
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import Log

from gpu_tui.ui.widgets.log_view import LogView

LINES = [f"epoch {i} | loss {1 / (i + 1):.4f} | val_loss {1.1 / (i + 1):.4f}" for i in range(30)]


class Pair(App[None]):
    CSS = "Log { height: 12; }"

    def compose(self) -> ComposeResult:
        yield Log(id="plain")
        yield LogView(id="view")


def _painted(log: Log) -> list[list[tuple[str, object]]]:
    strips: list[Strip] = log.render_lines(Region(0, 0, log.size.width, log.size.height))
    return [[(seg.text, seg.style) for seg in strip] for strip in strips]


async def _written(app: Pair, pilot: Pilot[None]) -> tuple[Log, LogView]:
    plain, view = app.query_one("#plain", Log), app.query_one("#view", LogView)
    for log in (plain, view):
        log.write_lines(LINES)
    await pilot.pause()
    return plain, view


@pytest.mark.parametrize("focused", [False, True])
async def test_it_paints_what_log_paints(focused: bool) -> None:
    app = Pair()
    async with app.run_test(size=(60, 30)) as pilot:
        plain, view = await _written(app, pilot)
        if focused:  # Log:focus tints the background: the style a paint keeps must follow it
            plain.focus()
            await pilot.pause()
            want = _painted(plain)
            view.focus()
            await pilot.pause()
        else:
            app.screen.set_focus(None)  # the first Log had the app's first focus
            await pilot.pause()
            want = _painted(plain)
        got = _painted(view)
        assert got == want and len(got) == 12
        assert any(text.startswith("epoch") for line in got for text, _style in line)
        # outside a paint, the style is Textual's own: a change since the paint shows at once
        real = DOMNode.rich_style.fget
        assert real is not None
        painted_with = real(view)
        view.styles.background = "red"
        assert view.rich_style == real(view) != painted_with


async def test_a_paint_works_out_the_style_once(monkeypatch: pytest.MonkeyPatch) -> None:
    app = Pair()
    async with app.run_test(size=(60, 30)) as pilot:
        plain, view = await _written(app, pilot)
        asked: list[str] = []
        real = DOMNode.rich_style.fget
        assert real is not None
        monkeypatch.setattr(DOMNode, "rich_style", property(lambda node: asked.append(node.id or "") or real(node)))
        for log in (plain, view):
            log.refresh()  # every line painted afresh, as after a write or a scroll
            _painted(log)
        assert asked.count("view") == 1
        assert asked.count("plain") >= 12  # Textual's Log: once a line
