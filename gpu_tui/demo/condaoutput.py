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

_PLATFORM = "linux-64"
_CHANNEL_URLS = (
    "https://repo.anaconda.com/pkgs/main/linux-64",
    "https://repo.anaconda.com/pkgs/main/noarch",
    "https://repo.anaconda.com/pkgs/r/linux-64",
    "https://repo.anaconda.com/pkgs/r/noarch",
)
PIP_ROOT_WARNING = (
    "WARNING: Running pip as the 'root' user can result in broken permissions and conflicting behaviour "
    "with the system package manager, possibly rendering your system unusable. It is recommended to use a "
    "virtual environment instead: https://pip.pypa.io/warnings/venv. Use the --root-user-action option if "
    "you know what you are doing and want to suppress this warning.\n"
)
CONDA_TAILS = {s: f"\nCondaSignalInterrupt: Signal interrupt SIG{n}\n\n" for n, s in (("INT", 2), ("TERM", 15))}
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
    tl.at(0.0, f"Channels:\n - defaults\nPlatform: {_PLATFORM}\n")
    tl.at(solve_until * 0.6, "Collecting package metadata (repodata.json): done\n")


def write_not_found(tl: Timeline, missing: list[str]) -> None:
    """The end of a solve that found no `missing` package on any channel."""
    tl.at(
        1.0,
        "Solving environment: failed\n\n"
        "PackagesNotFoundError: The following packages are not available from current channels:\n\n"
        + "".join(f"  - {m}\n" for m in missing)
        + "\nCurrent channels:\n\n"
        + "".join(f"  - {c}\n" for c in _CHANNEL_URLS)
        + "\nTo search for alternate channels that may provide the conda package you're\n"
        "looking for, navigate to\n\n    https://anaconda.org\n\nand use the search bar at the top of the page.\n\n\n",
    )


def package_plan(
    prefix: str, specs: list[str], dists: list[tuple[Pkg, str]], py: str | None, *, downloads: list[tuple[Pkg, str]]
) -> str:
    """conda's `## Package Plan ##`: the specs asked for, the downloads, the new packages."""
    lines = ["", "## Package Plan ##", "", f"  environment location: {prefix}", ""]
    if specs:
        lines += ["  added / updated specs:"] + [f"    - {s}" for s in specs] + ["", ""]
    if downloads:
        lines += ["The following packages will be downloaded:", ""]
        lines += ["    " + "package".ljust(27) + "|" + "build".rjust(17), "    " + "-" * 27 + "|" + "-" * 17]
        total = 0.0
        for pkg, version in downloads:
            spec = pkg.name + "-" + version
            lines.append(f"    {spec:<27}|{build_string(pkg, version, py):>17}{conda_size(pkg.wheel_mb):>15}")
            total += pkg.wheel_mb
        lines += ["    " + "-" * 60, " " * 43 + "Total:" + f"{conda_size(total):>15}", ""]
    if dists:
        lines += ["The following NEW packages will be INSTALLED:", ""]
        for pkg, version in sorted(dists, key=lambda d: d[0].name):
            sub = "noarch" if pkg.name == "tzdata" else _PLATFORM
            lines.append(f"  {pkg.name:<18} pkgs/main/{sub}::{pkg.name}-{version}-{build_string(pkg, version, py)} ")
        lines += ["", ""]
    return "\n".join(lines) + "\n"


def write_transaction(tl: Timeline, downloads: list[tuple[Pkg, str]], py: str | None, start: float, end: float) -> None:
    """The downloads' lines between `start` and `end` (fractions), then the transaction's."""
    tl.at(start, "Downloading and Extracting Packages:\n")
    total = sum(p.wheel_mb for p, _ in downloads) or 1.0
    done = 0.0
    for pkg, version in downloads:
        done += pkg.wheel_mb
        spec = pkg.name + "-" + version
        line = f"{spec:<20} | {conda_size(pkg.wheel_mb):<9} | {'#' * 10} | 100% \n"
        tl.at(start + (end - start) * done / total, line)
    tl.at(end, "\n")
    tl.at(end + (1 - end) * 0.3, "Preparing transaction: done\n")
    tl.at(end + (1 - end) * 0.6, "Verifying transaction: done\n")
