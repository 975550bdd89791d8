"""A job's series as `gpu-tui metrics` reads them: one catch-up of the summariser on the instance
(services/jobs/series/summariser.py, shipped by ship.py when missing or another version), then every
point it holds. Where the instance has no python3 for it, the log's last 256 KiB are read here
instead (`window`: the series then cover only the run's end).

With a `cache` (services/jobs/series/cache.py, in Paths.series_cache) a copy of the instance's
series.jsonl is kept per instance and job, and only what was appended to it since is fetched:
the file only grows until the summariser writes it anew, which its first line (a new
generation) says; then the whole file comes again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import zlib
from dataclasses import dataclass, field

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.i18n import _
from gpu_tui.core.trainlog.read import whole_lines
from gpu_tui.core.trainlog.series import SeriesReader
from gpu_tui.core.trainlog.series_decode import SeriesDecoder
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import fill_script, quote, sh_c
from gpu_tui.services.jobs.jobdir import job_dir
from gpu_tui.services.jobs.runner import read_log_bytes
from gpu_tui.services.jobs.series.cache import SeriesCache
from gpu_tui.services.jobs.series.ship import DIR, ENTRY, install_series, version
from gpu_tui.services.statedir import shell_state_dir

__all__ = ["WINDOW_BYTES", "Series", "JobSeries", "catch_up_script", "read_series"]

log = logging.getLogger(__name__)

WINDOW_BYTES = 256 * 1024
"""What is read of the log's end where the instance cannot run the summariser (as `jobs`)."""
CATCH_UP_TIMEOUT_S = 600
"""A first read of a long log takes a while (about 2 MB/s); later ones only read what grew."""

Point = tuple[float, float, "float | None"]


@dataclass(frozen=True, slots=True)
class Series:
    tag: str
    points: list[Point]
    source: str = "log"
    """Where it was read: `log` (the job's log), or a file the job wrote: `tensorboard`,
    `trainer_state`, `csv`, `mlflow` (services/jobs/series/runfiles.py)."""


@dataclass(frozen=True, slots=True)
class JobSeries:
    job: str
    series: list[Series]
    window: bool = False
    """Read from the log's last WINDOW_BYTES here, not the whole log on the instance."""
    read_bytes: int | None = None
    """Log bytes the instance's catch-up read this time (None for a window)."""
    status: dict[str, object] = field(default_factory=dict)
    fetched: int | None = None
    """Series bytes that came over the link this time (what was appended since the cached copy)."""
    thin: bool = False
    """The instance's overview of the points (core/trainlog/overview), not every point."""


_CATCH_UP = r"""
s=__STATE__
d=__JOBDIR__
[ -d "$d" ] || { echo "@@nojob"; exit 0; }
v=; [ -f "$s/bin/__DIR__/VERSION" ] && read -r v < "$s/bin/__DIR__/VERSION"
[ "$v" = __VERSION__ ] || { echo "@@install"; exit 0; }
exec sh "$s/bin/__ENTRY__" "$s" once "$d" __GEN__ __FROM__ __THIN__
"""


def catch_up_script(state: str, jobdir: str, *, gen: str = "", start: int = 0, thin: bool = False) -> str:
    """One catch-up of the job in `jobdir` (shell words), then its points (summariser.py `once`):
    from byte `start` when the points file is still generation `gen` (the copy held here);
    `thin`: the points file's overview instead (core/trainlog/overview)."""
    return fill_script(
        _CATCH_UP,
        STATE=state,
        JOBDIR=jobdir,
        DIR=DIR,
        VERSION=version(),
        ENTRY=ENTRY,
        GEN=quote(gen or "-"),
        FROM=str(int(start)),
        THIN="thin" if thin else "",
    )


def _generation(copy: bytes) -> str:
    head = copy.partition(b"\n")[0]
    try:
        obj = json.loads(head.decode("utf-8"))
    except ValueError:
        return ""
    return str(obj.get("gen") or "") if isinstance(obj, dict) else ""


def _inflate(body: bytes) -> bytes:
    """The points as the summariser sends them (zlib); what a link cut short left is dropped."""
    unpack = zlib.decompressobj()
    try:
        return unpack.decompress(body)
    except zlib.error:
        return b""


def _series(points: dict[str, list[Point]]) -> list[Series]:
    return [Series(tag, pts) for tag, pts in points.items()]


def _decode(
    cache: SeriesCache | None, inst: InstanceConfig, job_id: str, gen: str, data: bytes
) -> dict[tuple[str, str], list[Point]]:
    """The points of series file `data` (generation `gen`): only what the cache's decoder of that
    generation has not read yet is parsed (a big run's whole file takes seconds). In a thread."""
    held = cache.decoded(inst, job_id, gen) if cache is not None and gen else None
    decoder, start = held if held is not None and held[1] <= len(data) else (SeriesDecoder(), 0)
    decoder.feed(data[start:].decode("utf-8", "replace"))
    if cache is not None and gen:
        cache.keep_decoded(inst, job_id, gen, len(data), decoder)
    return decoder.result()


async def _window(host: Host, inst: InstanceConfig, job_id: str, charset: str | None) -> JobSeries:
    got = await read_log_bytes(host, inst, job_id, WINDOW_BYTES)
    reader = SeriesReader(charset)
    found = reader.feed(whole_lines(got.data, from_start=got.whole)) + reader.close()
    points: dict[str, list[Point]] = {}
    for p in found:
        points.setdefault(p.tag, []).append((p.x, p.value, p.time))
    return JobSeries(job_id, _series(points), window=True)


async def read_series(
    host: Host,
    inst: InstanceConfig,
    job_id: str,
    *,
    charset: str | None = None,
    cache: SeriesCache | None = None,
    thin: bool = False,
) -> JobSeries:
    """Every point of the job's log and of the files it wrote, up to now (see the module
    docstring); `cache`: where copies of series files are kept (None: fetch it whole). `thin`:
    the instance's overview of them instead (a few thousand points a series, the last ones
    whole), for a first paint; the cache is neither read nor written."""
    where = job_dir(inst, job_id)
    if thin:
        cache = None
    copy = cache.load(inst, job_id) if cache is not None else b""
    gen = _generation(copy) if copy else ""
    # off the event loop: the first call builds the shipped files' version (~0.2 s of CPU), which
    # held the log screen's first paint back by 300 ms
    script = await asyncio.to_thread(
        catch_up_script, shell_state_dir(inst), where, gen=gen, start=len(copy) if gen else 0, thin=thin
    )
    for attempt in (1, 2):
        res = await host.run_bytes(sh_c(script), timeout=CATCH_UP_TIMEOUT_S)
        head, _nl, body = res.stdout.partition(b"\n")
        word = head.strip().decode("utf-8", "replace")
        if word == "@@install" and attempt == 1:
            await install_series(host, inst)
            continue
        if word == "@@nopython":
            return await _window(host, inst, job_id, charset)
        if word == "@@nojob":
            return JobSeries(job_id, [])
        if not word.startswith("@@status "):
            raise RemoteError(
                _("{name}: the series summariser did not answer: {error}").format(
                    name=inst.name, error=(res.stderr or word).strip()[:300]
                )
            )
        status = json.loads(word.removeprefix("@@status "))
        status = status if isinstance(status, dict) else {}
        read = status.get("read")
        fresh = _inflate(body)
        start = status.get("from")
        appended = bool(gen) and status.get("gen") == gen and isinstance(start, int) and start == len(copy) > 0
        # what was appended since the copy, else the whole file (a first call, or written anew)
        data = copy + fresh if appended else fresh
        data = data[: data.rfind(b"\n") + 1]
        if cache is not None and appended:
            if len(data) > len(copy):
                cache.append(inst, job_id, len(copy), data[len(copy) :])
        elif cache is not None and data != copy:
            cache.save(inst, job_id, data)
        gen_now = status.get("gen")
        found = await asyncio.to_thread(_decode, cache, inst, job_id, gen_now if isinstance(gen_now, str) else "", data)
        return JobSeries(
            job_id,
            [Series(tag, pts, source) for (source, tag), pts in found.items()],
            read_bytes=read if isinstance(read, int) else None,
            status=status,
            fetched=len(fresh),
            thin=status.get("thin") is True,
        )
    raise RemoteError(_("{name}: the series summariser could not be installed").format(name=inst.name))
