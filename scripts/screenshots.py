"""Regenerate screenshots/ from the demo fleet on a fixed clock: `python scripts/screenshots.py`.

Writes SVG (what Textual exports) and, where `rsvg-convert` is installed (Debian: librsvg2-bin),
a PNG of each for places that do not show SVG.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

from gpu_tui.ui.factory import build_app, demo_source
from gpu_tui.ui.still import settle

OUT = Path(__file__).resolve().parents[1] / "screenshots"
FIXED_CLOCK = 1_796_000_000.0  # 2026-11-29, so cost and uptime read the same every run

SHOTS = [
    # (file, terminal size, keys pressed after the fleet settled)
    ("dashboard.svg", (120, 36), ["j", "j"]),
    ("dashboard-80x24.svg", (80, 24), []),
    ("gpu-error.svg", (80, 24), ["j", "j", "j", "j"]),
    ("detail.svg", (120, 40), ["j", "j", "enter"]),
    ("help.svg", (80, 24), ["question_mark"]),
    # (file, size, keys, seconds to wait after them: the instance answers these screens)
    ("conda.svg", (80, 24), ["e"], 3.0),
    ("env-check.svg", (100, 30), ["c"], 4.0),
]


async def shoot(name: str, size: tuple[int, int], keys: list[str], wait: float | None = None) -> None:
    app = build_app(demo_source(seed=0, clock=lambda: FIXED_CLOCK), clock=lambda: FIXED_CLOCK)
    async with app.run_test(size=size) as pilot:
        if wait is None:
            await settle(app)
        else:
            # these screens ask the instance, so the monitors (and connections) must keep running
            while app.fleet is None or app.dashboard.selected() is None or app.dashboard.selected().state != "online":
                await pilot.pause(0.1)
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.3 if wait is None else wait)
        app.save_screenshot(name, str(OUT))
    print(f"wrote {OUT / name}")
    converter = shutil.which("rsvg-convert")
    if converter:
        png = (OUT / name).with_suffix(".png")
        # rsvg collapses runs of spaces (columns!) unless told the text is preformatted
        svg = (OUT / name).read_text(encoding="utf-8").replace("<svg ", '<svg xml:space="preserve" ', 1)
        subprocess.run([converter, "-o", str(png)], input=svg.encode(), check=True)
        print(f"wrote {png}")


async def main() -> None:
    OUT.mkdir(exist_ok=True)
    for name, size, keys, *wait in SHOTS:
        await shoot(name, size, keys, *wait)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
