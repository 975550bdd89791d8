"""Regenerate screenshots/ from the demo fleet on a fixed clock: `python scripts/screenshots.py`.

Writes SVG (what Textual exports) and, where `rsvg-convert` is installed (Debian: librsvg2-bin),
a PNG of each for places that do not show SVG. Local times (the detail screen's clock) are in
UTC, so the pictures are the same on every machine; the screens that ask the instance (conda,
the environment check) are taken once their answer is on the screen, then frozen.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.pilot import Pilot
from textual.widgets import DataTable, OptionList, Select, Static

from gpu_tui.ui.app import GpuTuiApp
from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.screens.conda import CondaScreen
from gpu_tui.ui.screens.env_check import EnvCheckScreen
from gpu_tui.ui.screens.fit import FitScreen
from gpu_tui.ui.still import settle

OUT = Path(__file__).resolve().parents[1] / "screenshots"
FIXED_CLOCK = 1_796_000_000.0  # 2026-11-30 00:53:20 UTC, so cost and uptime read the same every run


def _plain(static: Static) -> str:
    content = static.content
    return content.plain if isinstance(content, Text) else str(content)


def conda_listed(app: GpuTuiApp) -> bool:
    """The conda manager has every env's python and size."""
    screen = app.screen
    if not isinstance(screen, CondaScreen) or screen.listing or screen.install is None:
        return False
    table = screen.query_one("#envs", DataTable)
    cells = [str(c) for i in range(table.row_count) for c in table.get_row_at(i)]
    return table.row_count > 0 and "…" not in cells


def env_checked(app: GpuTuiApp) -> bool:
    """The environment check has its result and the env picker its list."""
    screen = app.screen
    if not isinstance(screen, EnvCheckScreen):
        return False
    envs = screen.query_one("#env", Select).query_one(OptionList).option_count
    return envs > 1 and "to fix" in _plain(screen.query_one("#checks", Static))


def fit_shown(app: GpuTuiApp) -> bool:
    """The VRAM calculator has its estimate for the default model, with the fleet's cards."""
    screen = app.screen
    if not isinstance(screen, FitScreen):
        return False
    # the result is a table (a string only while there is none, or an error)
    return not isinstance(screen.query_one("#fit-result", Static).content, str)


Ready = Callable[[GpuTuiApp], bool]

SHOTS: list[tuple[str, tuple[int, int], list[str], Ready | None]] = [
    # (file, terminal size, keys pressed, what the screen waits for after them: None for screens
    # that show only what the dashboard has, taken after it settled)
    ("dashboard.svg", (120, 36), ["j", "j"], None),
    ("dashboard-80x24.svg", (80, 24), [], None),
    ("gpu-error.svg", (80, 24), ["j", "j", "j", "j"], None),
    ("detail.svg", (120, 40), ["j", "j", "enter"], None),
    ("help.svg", (80, 24), ["question_mark"], None),
    # these screens ask the instance: the monitors (and connections) run until they have answered
    ("conda.svg", (80, 24), ["e"], conda_listed),
    ("env-check.svg", (100, 30), ["c"], env_checked),
    ("fit.svg", (80, 24), ["v"], fit_shown),
    # README.zh-CN's picture: a name with `-zh-CN` is taken in Chinese
    ("dashboard-zh-CN-80x24.svg", (80, 24), [], None),
]


async def until(pilot: Pilot[Any], check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            raise TimeoutError(f"waited {timeout:.0f} s for {what}")
        await pilot.pause(0.05)


async def shoot(name: str, size: tuple[int, int], keys: list[str], ready: Ready | None) -> None:
    language = "zh-CN" if "-zh-CN" in name else "en"
    app = build_app(demo_source(seed=0, clock=lambda: FIXED_CLOCK), clock=lambda: FIXED_CLOCK, language=language)
    async with app.run_test(size=size) as pilot:
        if ready is None:
            await settle(app)
            await pilot.press(*keys)
        else:

            def online() -> bool:
                view = app.dashboard.selected() if app.fleet is not None else None
                return view is not None and view.state == "online" and view.jobs_listed

            await until(pilot, online, "the selected instance")
            await pilot.press(*keys)
            await until(pilot, lambda: ready(app), name)
            await settle(app)
        await pilot.pause(0.3)
        app.save_screenshot(name, str(OUT))
    print(f"wrote {OUT / name}")
    converter = shutil.which("rsvg-convert")
    if converter and language == "en":  # rsvg draws CJK as boxes without a CJK font; the SVG is read by browsers
        png = (OUT / name).with_suffix(".png")
        # rsvg collapses runs of spaces (columns!) unless told the text is preformatted
        svg = (OUT / name).read_text(encoding="utf-8").replace("<svg ", '<svg xml:space="preserve" ', 1)
        subprocess.run([converter, "-o", str(png)], input=svg.encode(), check=True)
        print(f"wrote {png}")


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, size, keys, ready in SHOTS:
        await shoot(name, size, keys, ready)


if __name__ == "__main__":
    os.environ["TZ"] = "UTC"
    time.tzset()
    asyncio.run(main())
    sys.exit(0)
