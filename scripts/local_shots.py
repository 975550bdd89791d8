"""Run `gpu-tui local` headless on a GPU machine and save what it shows.

`python scripts/local_shots.py OUTDIR [SECONDS]`: for 80x24 and 160x45, start the local-mode
dashboard, print the time from start to the first GPU frame on screen and the process CPU used
while it streamed for SECONDS (default 20), and save an SVG of the screen (live, not settled,
so history has filled for real).
"""

from __future__ import annotations

import asyncio
import resource
import sys
import time
from pathlib import Path

from gpu_tui.ui.factory import build_app, local_source


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def shot(out: Path, size: tuple[int, int], seconds: float) -> None:
    app = build_app(local_source())
    t0 = time.monotonic()
    async with app.run_test(size=size) as pilot:
        while not (app.fleet and any(v.frame for v in app.fleet.views.values())):
            if time.monotonic() - t0 > 30:
                print(f"{size}: no frame in 30 s", {n: v.shown_state for n, v in (app.fleet.views.items() if app.fleet else [])})
                break
            await asyncio.sleep(0.01)
        first = time.monotonic() - t0
        c0, w0 = _cpu(), time.monotonic()
        await asyncio.sleep(seconds)
        cpu = (_cpu() - c0) / (time.monotonic() - w0) * 100
        await pilot.pause(0.2)
        name = f"local-{size[0]}x{size[1]}.svg"
        app.save_screenshot(name, str(out))
        if size[0] >= 120:
            await pilot.press("enter")
            await pilot.pause(0.5)
            app.save_screenshot(f"local-detail-{size[0]}x{size[1]}.svg", str(out))
        view = next(iter(app.fleet.views.values())) if app.fleet else None
        print(
            f"{size[0]}x{size[1]}: first frame {first * 1000:.0f} ms; CPU {cpu:.1f}% of a core over {seconds:g} s;"
            f" state={view.shown_state if view else None} gpu_error={view.gpu_error if view else None}"
            f" frame={view.frame if view else None}"
        )


async def main() -> None:
    out = Path(sys.argv[1])
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    out.mkdir(parents=True, exist_ok=True)
    for size in ((80, 24), (160, 45)):
        await shot(out, size, seconds)


if __name__ == "__main__":
    asyncio.run(main())
