"""`WatchLoop`: one long-lived on-instance loop per connection for everything but the GPU stream.

The loop (watch.sh, shipped once to `<state_dir>/bin/watch-v1.sh` like the job runner) answers
each newline the client writes on its stdin with one framed record (core/metrics/watchrec.py): host
stats, the job list and running jobs' log ends when they changed, the autostop watchdog's state
when it changed, and the GPU compute apps from its own long-lived `nvidia-smi -l`. So in steady
state nothing is exec'd per tick: no channel opens, and on the instance only builtins run
(`df` every couple of minutes, `tail` for a log that grew). The loop ends with its channel.

Where it cannot run (a state dir that cannot be written, no /proc, a shell that refuses it) the
loop says why and gpu-tui falls back to polling (`mode` POLLING, `note` the reason): the monitor
runs its stats loop and the JobWatcher lists jobs every few seconds, as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.autostop import parse_status
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.jobs import JobFacts, JobInfo, job_state, parse_job_listing
from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.metrics.holders import parse_scan
from gpu_tui.core.metrics.hoststats import CpuTimes, parse_probe
from gpu_tui.core.metrics.watchrec import RecordParser, WatchFail, WatchHello, WatchRecord
from gpu_tui.core.trainlog.read import summarize
from gpu_tui.core.trainlog.summary import LogSummary
from gpu_tui.remote.cancels import raise_lost_cancel
from gpu_tui.remote.host import DuplexStream, Host
from gpu_tui.remote.quoting import fill_script, sh_c
from gpu_tui.services.events import HoldersReceived, HostStatsReceived, ProcessesReceived
from gpu_tui.services.jobs.runner import FailureNotes, failure_notes, info_with_summary, with_notes
from gpu_tui.services.jobs.watch import AutostopReceived, JobFinished, JobsReceived
from gpu_tui.services.monitor.probes import holders_script
from gpu_tui.services.statedir import shell_state_dir

__all__ = [
    "WATCH_VERSION",
    "WATCH_NAME",
    "WatchMode",
    "WatchModeChanged",
    "WatchLoop",
    "WatchRefused",
    "watch_command",
]

log = logging.getLogger(__name__)

WATCH_VERSION = 3
"""2: the job listing carries each job's `charset`; 3: who holds each GPU's device file (holders.sh)."""
WATCH_NAME = f"watch-v{WATCH_VERSION}.sh"
TICK_SECONDS = 2.0
"""A record every 2 s: a job's end reaches the dashboard within about that (the goal is 5 s)."""
FIRST_TICK_GAP = 1.0
"""The second record comes 1 s after the first: CPU % needs two readings."""
APPS_SECONDS = 5
DF_EVERY = 60
"""`df /` every 60th tick (2 min): disk use moves slowly, and it is a process each time."""
LOG_EVERY = 6
"""A running job's log end is read every 6th tick (12 s) when it grew: a `tail` each time."""
LOG_WINDOW = 64 * 1024
HOLDERS_EVERY = 5
"""Who holds the GPUs is scanned every 5th tick (10 s), and when the compute apps changed; on an
instance of more than 100 processes every N/20th tick: the scan reads every process's open files,
about 0.2 ms of CPU a process (benchmarks/bench_holders.py)."""
HELLO_TIMEOUT = 15.0
RESTART_SECONDS = 2.0
MAX_QUICK_DEATHS = 3
"""A loop that dies this many times in a row before its first record: fall back to polling."""


class WatchMode(enum.StrEnum):
    STARTING = "starting"
    LIVE = "live"
    POLLING = "polling"


@dataclass(frozen=True, slots=True)
class WatchModeChanged:
    """The watch loop started, or gpu-tui fell back to polling (`note` says why)."""

    name: str
    mode: WatchMode
    note: str | None = None


class WatchRefused(RemoteError):
    """The loop cannot run on this instance (the reason is the message)."""


WatchEvent = (
    WatchModeChanged
    | HostStatsReceived
    | ProcessesReceived
    | HoldersReceived
    | AutostopReceived
    | JobsReceived
    | JobFinished
)
Emit = Callable[[WatchEvent], None]


def _script_text() -> str:
    here = resources.files("gpu_tui.services.monitor")
    loop = here.joinpath("watch.sh").read_text(encoding="utf-8")
    return loop.replace("# @@holders.sh@@\n", holders_script(), 1)


_INSTALL = r"""
set -e
umask 077
mkdir -p __STATE__/bin
s=__STATE__/bin/__SCRIPT__
cat > "$s.tmp"
mv -f "$s.tmp" "$s"
"""


def watch_command(inst: InstanceConfig, nonce: str) -> str:
    """The command line that runs the installed loop (or says `missing`)."""
    state = shell_state_dir(inst)
    script = f"{state}/bin/{WATCH_NAME}"
    args = f"{state} {nonce} {APPS_SECONDS} {DF_EVERY} {LOG_EVERY} {LOG_WINDOW} {HOLDERS_EVERY}"
    return sh_c(f'[ -f {script} ] || {{ echo "@@w{nonce} missing"; exit 93; }}\nexec sh {script} {args}')


class WatchLoop:
    """Runs the loop for one connection (`run_session`), restarting it if it dies."""

    def __init__(
        self,
        host: Host,
        inst: InstanceConfig,
        emit: Emit,
        *,
        tick_seconds: float = TICK_SECONDS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.host, self.inst = host, inst
        self.name = inst.name
        self._emit = emit
        self._tick = tick_seconds
        self._clock = clock
        self.mode = WatchMode.STARTING
        self.note: str | None = None
        self.pid: int | None = None
        """The loop's pid on the instance (from its hello)."""
        self.records = 0
        self._stream: DuplexStream | None = None
        self._installed = False
        # kept across loop restarts on one connection, so a restart reports no false job ends
        self._states: dict[str, str] | None = None
        self._facts: list[JobFacts] = []
        self._summaries: dict[str, LogSummary] = {}
        self._notes: dict[str, FailureNotes] = {}  # beyond a failure's kind, per log read
        self._prev_cpu: CpuTimes | None = None
        self._disk: str | None = None

    @property
    def live(self) -> bool:
        return self.mode is WatchMode.LIVE

    def _set_mode(self, mode: WatchMode, note: str | None = None) -> None:
        if mode is self.mode and note == self.note:
            return
        self.mode, self.note = mode, note
        self._emit(WatchModeChanged(self.name, mode, note))

    def poke(self) -> None:
        """A record now (after the user started or stopped a job)."""
        stream = self._stream
        if stream is not None:
            with contextlib.suppress(RemoteError):
                stream.write(".j\n")

    def reset(self) -> None:
        """A new connection: try the loop again (a fallback is decided per connection)."""
        self.mode, self.note = WatchMode.STARTING, None
        self._prev_cpu = None

    async def run_session(self) -> None:
        """Until cancelled (the connection's end). Returns only to fall back to polling."""
        deaths = 0
        while True:
            raise_lost_cancel()  # a cancel a command dropped (3.11's wait_for) ends it here
            before = self.records
            try:
                reason = await self._run_once()
            except WatchRefused as exc:
                log.info("%s: watch loop refused: %s; polling instead", self.name, exc.message)
                self._set_mode(WatchMode.POLLING, f"polling fallback: {exc.message}")
                return
            except RemoteError as exc:
                reason = exc.message
            finally:
                self._stream = None
            if reason == "installed":
                continue  # the script was missing: run it now
            if not self.host.connected:
                return
            deaths = 0 if self.records > before else deaths + 1
            if deaths >= MAX_QUICK_DEATHS:
                self._set_mode(WatchMode.POLLING, f"polling fallback: the watch loop keeps ending ({reason})")
                return
            log.info("%s: watch loop ended (%s); restarting", self.name, reason)
            self._set_mode(WatchMode.STARTING)
            await asyncio.sleep(RESTART_SECONDS)

    async def _install(self) -> None:
        script = fill_script(_INSTALL, STATE=shell_state_dir(self.inst), SCRIPT=WATCH_NAME)
        res = await self.host.run(sh_c(script), stdin=_script_text(), timeout=30)
        if not res.ok:
            text = (res.stderr or res.stdout).strip()[:200]
            raise WatchRefused(f"cannot write to state_dir {self.inst.state_dir}: {text}")
        self._installed = True

    async def _run_once(self) -> str:
        nonce = secrets.token_hex(4)
        parser = RecordParser(nonce)
        try:
            cm = self.host.duplex(watch_command(self.inst, nonce))
        except RemoteError as exc:
            raise WatchRefused(exc.message) from None
        async with cm as stream:
            self._stream = stream
            # the first record at once. A command that ended already (the script is `missing`)
            # may have closed the channel: its output still says why, so read it
            with contextlib.suppress(RemoteError):
                stream.write(".t\n")
            ticker = asyncio.create_task(self._ticks(stream), name=f"{self.name}-watch-tick")
            hello = False
            try:
                async with asyncio.timeout(HELLO_TIMEOUT) as deadline:
                    async for chunk in stream.chunks():
                        for item in parser.feed(chunk):
                            if isinstance(item, WatchRecord):
                                if not hello:
                                    continue
                                self._record(item)
                            elif isinstance(item, WatchHello):
                                hello = True
                                deadline.reschedule(None)
                                self.pid = item.pid
                                if item.version != WATCH_VERSION:
                                    raise WatchRefused(f"watch loop version {item.version}, expected {WATCH_VERSION}")
                            elif isinstance(item, WatchFail):
                                if item.reason == "missing" and not self._installed:
                                    await self._install()
                                    return "installed"
                                raise WatchRefused(item.reason)
            except TimeoutError:
                why = "; ".join(parser.stray) or "no answer"
                raise WatchRefused(f"the watch loop did not start: {why}") from None
            finally:
                ticker.cancel()
                await asyncio.gather(ticker, return_exceptions=True)
            if not hello:
                raise WatchRefused("the watch loop did not start: " + ("; ".join(parser.stray) or "no output"))
            return f"exit status {stream.exit_status}"

    async def _ticks(self, stream: DuplexStream) -> None:
        await asyncio.sleep(FIRST_TICK_GAP)
        while True:
            try:
                stream.write(".t\n")
            except RemoteError:
                return  # the channel closed: the reader sees its end
            await asyncio.sleep(self._tick)

    # ------------------------------------------------------------------ one record

    def _record(self, rec: WatchRecord) -> None:
        self.records += 1
        if self.mode is not WatchMode.LIVE:
            self._set_mode(WatchMode.LIVE)
        name = self.name
        stats_lines = rec.stats
        for line in stats_lines:
            if line.startswith("disk "):
                self._disk = line
                break
        else:
            if self._disk is not None:
                stats_lines = stats_lines + [self._disk]
        stats, self._prev_cpu = parse_probe(stats_lines, self._clock(), self._prev_cpu)
        self._emit(HostStatsReceived(name, stats))
        if rec.apps is not None:
            self._emit(ProcessesReceived(name, tuple(nvsmi.parse_compute_apps(rec.apps))))
        if rec.holders is not None:
            self._emit(HoldersReceived(name, parse_scan(rec.holders)))
        if rec.autostop is not None:
            self._emit(AutostopReceived(name, parse_status(rec.autostop), time.monotonic()))
        if rec.jobs is not None:
            self._facts = parse_job_listing(rec.jobs)
        if rec.logs:
            charsets = {f.id: f.charset for f in self._facts}
            facts = {f.id: f for f in self._facts}
            for job_id, data in rec.logs.items():
                summary = summarize(data, from_start=len(data) < LOG_WINDOW, charset=charsets.get(job_id))
                self._summaries[job_id] = summary
                job = facts.get(job_id)
                self._notes[job_id] = failure_notes(job, summary, data) if job is not None else (None, None)
        if rec.jobs is not None:
            known = {f.id for f in self._facts}
            for job_id in [j for j in self._summaries if j not in known]:
                del self._summaries[job_id]  # pruned
                self._notes.pop(job_id, None)
        if rec.jobs is not None or rec.logs:
            self._jobs()

    def _jobs(self) -> None:
        infos = []
        for f in self._facts:
            summary = self._summaries.get(f.id)
            info = info_with_summary(f, summary) if summary is not None else JobInfo(f, *job_state(f))
            notes = self._notes.get(f.id)
            infos.append(with_notes(info, notes) if notes is not None else info)
        previous = self._states
        self._states = {i.id: i.state for i in infos}
        self._emit(JobsReceived(self.name, tuple(infos)))
        if previous is not None:
            for info in infos:
                if previous.get(info.id) == "running" and info.state != "running":
                    self._emit(JobFinished(self.name, info))
