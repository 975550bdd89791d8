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
]


async def shoot(name: str, size: tuple[int, int], keys: list[str]) -> None:
    app = build_app(demo_source(seed=0, clock=lambda: FIXED_CLOCK), clock=lambda: FIXED_CLOCK)
    async with app.run_test(size=size) as pilot:
        await settle(app)
        for key in keys:
            await pilot.press(key)
        await pilot.pause(0.3)
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
    for name, size, keys in SHOTS:
        await shoot(name, size, keys)


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
