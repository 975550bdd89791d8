"""`gpu-tui metrics NAME JOB [--tag TAG] [--json]`: every series a job logged, from its start.

The instance's summariser catches up first (services/jobs/series/read.py), so the answer holds
everything logged up to the call. The table is one row per tag; `--json` has every point.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace

from gpu_tui.commands import EXIT_OK
from gpu_tui.commands.support.cells import format_rows
from gpu_tui.config.paths import Paths
from gpu_tui.config.secrets import SecretStore
from gpu_tui.config.settings import InstanceConfig, Settings
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.runfiles.discover import MAX_DIR_ENTRIES
from gpu_tui.core.text import printable
from gpu_tui.remote.host import Host
from gpu_tui.services.hosts import build_ssh_host
from gpu_tui.services.jobs import runner as jobsvc
from gpu_tui.services.jobs.series.cache import SeriesCache
from gpu_tui.services.jobs.series.read import WINDOW_BYTES, JobSeries, Series, read_series

__all__ = ["run_metrics", "metrics_json", "metrics_table"]

HEADER = (N_("TAG"), N_("SOURCE"), N_("POINTS"), N_("FIRST STEP"), N_("LAST STEP"), N_("LAST"), N_("MIN"))


def metrics_json(found: JobSeries) -> dict[str, object]:
    """The `metrics --json` object of CONTRACTS.md: every point of every series."""
    return {
        "job": found.job,
        "series": [{"tag": s.tag, "source": s.source, "points": [list(p) for p in s.points]} for s in found.series],
        "window": found.window,
    }


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def metrics_table(series: list[Series]) -> str:
    """One row per series: points, first and last step, last value, minimum."""
    rows = [[_(h) for h in HEADER]]
    for s in series:
        values = [p[1] for p in s.points]
        rows.append(
            [
                printable(s.tag),
                s.source,
                str(len(s.points)),
                _num(s.points[0][0]),
                _num(s.points[-1][0]),
                f"{values[-1]:.4g}",
                f"{min(values):.4g}",
            ]
        )
    return "\n".join(format_rows(rows, right=(2, 3, 4, 5, 6)))


async def _metrics(args: argparse.Namespace, host: Host, inst: InstanceConfig, paths: Paths) -> JobSeries:
    job = await jobsvc.find_job(host, inst, args.job)
    found = await read_series(host, inst, job.id, charset=job.charset, cache=SeriesCache(paths.series_cache))
    if args.tag is not None:
        chosen = [s for s in found.series if s.tag == args.tag]
        if not chosen:
            known = ", ".join(s.tag for s in found.series[:12]) or _("none")
            raise InputError(
                _("{name}: job {job} has no series {tag!r}; it has: {known}").format(
                    name=inst.name, job=job.id, tag=args.tag, known=known
                )
            )
        found = replace(found, series=chosen)
    return found


def run_metrics(args: argparse.Namespace, settings: Settings, paths: Paths) -> int:
    inst = settings.instance(args.name)

    async def go() -> JobSeries:
        host = build_ssh_host(inst, settings, paths, SecretStore(), sighting=True)
        await host.connect()
        try:
            return await _metrics(args, host, inst, paths)
        finally:
            await host.close()

    try:
        found = asyncio.run(go())
    except KeyboardInterrupt:
        return 130
    if found.window:
        print(
            _("{name}: no python3 on the instance: only the log's last {size} KiB were read").format(
                name=inst.name, size=WINDOW_BYTES // 1024
            ),
            file=sys.stderr,
        )
    files = found.status.get("runfiles")
    walk = files.get("walk") if isinstance(files, dict) else None
    if isinstance(walk, dict) and walk.get("capped"):
        print(
            _(
                "{name}: the search for the run's own files (TensorBoard, trainer_state.json, CSV, MLflow) "
                "stopped at {cap} directory entries, or at a directory of more than {per_dir}: "
                "name where they are with `run --metrics DIR`"
            ).format(name=inst.name, cap=walk.get("cap"), per_dir=MAX_DIR_ENTRIES),
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(metrics_json(found), ensure_ascii=False))
    elif found.series:
        print(metrics_table(found.series))
    else:
        print(_("{name}: job {job} logged no series yet").format(name=inst.name, job=found.job))
    return EXIT_OK
