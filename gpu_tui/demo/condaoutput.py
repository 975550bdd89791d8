"""How an operation of the demo's conda (demo/condasim.py) prints, and when. Nothing is executed.

`Timeline` lays an operation's output out over its duration; `CondaOp` is the simulated conda or
pip process that plays it back in real seconds, ends with its status, and stops at once on a
signal (printing what conda or pip print then, `CONDA_TAILS` / `PIP_TAILS`). The functions
write the text blocks conda 24.x's operations share: the channels header, the Package Plan, the
download lines, PackagesNotFoundError.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from gpu_tui.demo.condacatalog import Pkg, build_string, conda_size
from gpu_tui.demo.sim import condatext as ct

__all__ = [
    "CondaOp",
    "Timeline",
    "CONDA_TAILS",
    "PIP_TAILS",
    "PIP_ROOT_WARNING",
    "write_channels",
    "write_not_found",
    "package_plan",
    "write_transaction",
]

PIP_ROOT_WARNING = (
    "WARNING: Running pip as the 'root' user can result in broken permissions and conflicting behaviour "
    "with the system package manager, possibly rendering your system unusable. It is recommended to use a "
    "virtual environment instead: https://pip.pypa.io/warnings/venv. Use the --root-user-action option if "
    "you know what you are doing and want to suppress this warning.\n"
)
CONDA_TAILS = ct.SIGNAL_TAILS
PIP_TAILS = {2: "ERROR: Operation cancelled by user\n"}
"""What conda and pip print when a signal stops them, by signal number."""


@dataclass(slots=True)
class CondaOp:
    """One simulated conda or pip process: its output on a timeline, its end, its effect."""

    pid: int
    started: float
    events: list[tuple[float, str]]
    """(seconds after the start, text), in order."""
    duration: float
    status: int
    on_done: Callable[[], None] | None = None
    ended_at: float | None = None
    exit_status: int | None = None
    tails: dict[int, str] = field(default_factory=dict)
    """What it prints when a signal stops it, by signal number."""
    _sent: int = 0
    _cut: float | None = None
    _tail: str = ""

    @property
    def running(self) -> bool:
        return self.exit_status is None

    def poll(self, now: float) -> None:
        if self.exit_status is None and now >= self.started + self.duration:
            self.exit_status = self.status
            self.ended_at = self.started + self.duration
            if self.on_done is not None:
                self.on_done()

    def kill(self, signal: int, now: float) -> None:
        if self.exit_status is not None or signal == 0:
            return
        self._cut = now - self.started
        self.ended_at = now
        self.exit_status = 128 + signal
        self._tail = self.tails.get(signal, "")

    def take(self, now: float) -> str:
        """The output due by `now` that was not taken yet (everything once it has ended)."""
        upto = now - self.started
        if self._cut is not None:
            upto = self._cut
        elif self.exit_status is not None:
            upto = float("inf")
        parts = []
        while self._sent < len(self.events) and self.events[self._sent][0] <= upto:
            parts.append(self.events[self._sent][1])
            self._sent += 1
        if self._cut is not None and self._tail:
            parts.append(self._tail)
            self._tail = ""
        return "".join(parts)

    @property
    def drained(self) -> bool:
        """Ended, and all it printed was taken."""
        if self.exit_status is None or self._tail:
            return False
        return self._cut is not None or self._sent >= len(self.events)


class Timeline:
    """Builds an operation's output: `at(fraction, text)`, a fraction of its duration (which
    may still change); never earlier than the text before it."""

    def __init__(self, duration: float) -> None:
        self.duration = duration
        self._marks: list[tuple[float, str]] = []

    def at(self, fraction: float, text: str) -> None:
        f = max(0.0, min(1.0, fraction))
        if self._marks and f < self._marks[-1][0]:
            f = self._marks[-1][0]
        self._marks.append((f, text))

    @property
    def events(self) -> list[tuple[float, str]]:
        return [(f * self.duration, text) for f, text in self._marks]


def write_channels(tl: Timeline, *, solve_until: float) -> None:
    """conda's first lines: the channels, the platform, the metadata fetched."""
    tl.at(0.0, ct.channels(["defaults"]))
    tl.at(solve_until * 0.6, ct.METADATA)


def write_not_found(tl: Timeline, missing: list[str]) -> None:
    """The end of a solve that found no `missing` package on any channel."""
    message = ct.not_found(missing, ct.CHANNEL_URLS)
    tl.at(1.0, "Solving environment: failed\n" + ct.error("PackagesNotFoundError", message))


def package_plan(
    prefix: str, specs: list[str], dists: list[tuple[Pkg, str]], py: str | None, *, downloads: list[tuple[Pkg, str]]
) -> str:
    """conda's `## Package Plan ##` (sim/condatext.py's): the specs asked for, the downloads, the new packages."""
    table = [(p.name + "-" + v, build_string(p, v, py), conda_size(p.wheel_mb)) for p, v in downloads]
    new = [
        f"  {p.name:<18} pkgs/main/{'noarch' if p.name == 'tzdata' else ct.PLATFORM}::"
        f"{p.name}-{v}-{build_string(p, v, py)} "
        for p, v in sorted(dists, key=lambda d: d[0].name)
    ]
    total = conda_size(sum(p.wheel_mb for p, _ in downloads))
    return ct.plan(prefix, specs, [("NEW packages will be INSTALLED", new)], (table, total) if downloads else None)


def write_transaction(tl: Timeline, downloads: list[tuple[Pkg, str]], py: str | None, start: float, end: float) -> None:
    """The downloads' lines between `start` and `end` (fractions), then the transaction's."""
    tl.at(start, ct.EXTRACTING)
    total = sum(p.wheel_mb for p, _ in downloads) or 1.0
    done = 0.0
    for pkg, version in downloads:
        done += pkg.wheel_mb
        spec = pkg.name + "-" + version
        line = f"{spec:<20} | {conda_size(pkg.wheel_mb):<9} | {'#' * 10} | 100% \n"
        tl.at(start + (end - start) * done / total, line)
    tl.at(end, "\n")
    tl.at(end + (1 - end) * 0.3, ct.PREPARED)
    tl.at(end + (1 - end) * 0.6, ct.VERIFIED)
