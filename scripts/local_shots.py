"""Run `gpu-tui local` headless on a GPU machine and save what it shows.

`python scripts/local_shots.py OUTDIR [SECONDS] [--job CMD]`: for 80x24 and 160x45, start the
local-mode dashboard, print the time from start to the first GPU frame on screen and the process
CPU used while it streamed for SECONDS (default 20), and save an SVG of the screen (live, not
settled, so history has filled for real). With `--job CMD`, CMD is first started as a gpu-tui
job on this machine, and the 160x45 run also saves its log screen (`l`).
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


async def start_job(command: str) -> None:
    from gpu_tui.config.settings import InstanceConfig
    from gpu_tui.core.jobs import JobRequest, new_job_id
    from gpu_tui.remote.local import LocalHost
    from gpu_tui.services.jobs.runner import start_job as start

    host = LocalHost("local")
    await host.connect()
    try:
        req = await start(
            host,
            InstanceConfig(name="local", host="localhost"),
            JobRequest(id=new_job_id(), command=command, name="train"),
        )
    finally:
        await host.close()
    print(f"started job {req.id}: {command}")


async def shot(out: Path, size: tuple[int, int], seconds: float, job: bool = False) -> None:
    app = build_app(local_source())
    t0 = time.monotonic()
    async with app.run_test(size=size) as pilot:
        while not (app.fleet and any(v.frame for v in app.fleet.views.values())):
            if time.monotonic() - t0 > 30:
                states = {n: v.shown_state for n, v in (app.fleet.views.items() if app.fleet else [])}
                print(f"{size}: no frame in 30 s", states)
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
            await pilot.press("escape")
            if job:
                await pilot.pause(6)  # the job list refreshes every 5 s
                await pilot.press("l")
                await pilot.pause(4)
                app.save_screenshot(f"local-job-{size[0]}x{size[1]}.svg", str(out))
        view = next(iter(app.fleet.views.values())) if app.fleet else None
        print(
            f"{size[0]}x{size[1]}: first frame {first * 1000:.0f} ms; CPU {cpu:.1f}% of a core over {seconds:g} s;"
            f" state={view.shown_state if view else None} gpu_error={view.gpu_error if view else None}"
            f" frame={view.frame if view else None}"
        )


async def main() -> None:
    args = sys.argv[1:]
    job = None
    if "--job" in args:
        i = args.index("--job")
        job = args[i + 1]
        del args[i : i + 2]
    out = Path(args[0])
    seconds = float(args[1]) if len(args) > 1 else 20.0
    out.mkdir(parents=True, exist_ok=True)
    if job:
        await start_job(job)
        await asyncio.sleep(0.5)  # let the subprocess transports of the start finish closing
    for size in ((80, 24), (160, 45)):
        await shot(out, size, seconds, job=job is not None)


if __name__ == "__main__":
    asyncio.run(main())
