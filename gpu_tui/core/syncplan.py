"""Sync rules without I/O: where LOCAL and REMOTE point, rsync-style excludes, rsync's output.

Path rules (CONTRACTS.md "Sync paths"): LOCAL defaults to the instance's `sync.local`, else the
current directory; REMOTE to `sync.remote`, else `workdir`, else the remote home, and a relative
REMOTE is relative to the remote home. Push makes REMOTE hold the contents of LOCAL, pull the
other way round (rsync with a trailing slash on the source); nothing is ever deleted.

Excludes follow rsync: a pattern without `/` matches a name at any depth, one with an inner `/`
matches the end of a path, a leading `/` anchors it at the transfer root, a trailing `/` matches
directories only; `*` and `?` stop at `/`, `**` does not, `[...]` is a class, `dir/***` is the
directory and everything in it. An excluded directory is not entered.
"""

from __future__ import annotations

import ntpath
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from gpu_tui.core.i18n import _, ngettext
from gpu_tui.core.units import format_bytes

__all__ = [
    "DIRECTIONS",
    "PARTIAL_SUFFIX",
    "RSYNC_PARTIAL_DIR",
    "Direction",
    "Excludes",
    "RsyncStats",
    "SyncProgress",
    "SyncSummary",
    "is_partial",
    "needs_transfer",
    "parse_progress",
    "parse_rsync_version",
    "parse_stats",
    "partial_name",
    "resolve_local",
    "resolve_remote",
    "summary_json",
    "summary_line",
]

Direction = Literal["push", "pull"]
DIRECTIONS: tuple[Direction, ...] = ("push", "pull")
RSYNC_PARTIAL_DIR = ".rsync-partial"
"""rsync's `--partial-dir`: an interrupted file waits there to be resumed (never copied itself)."""
PARTIAL_SUFFIX = ".gpu-tui-partial"
"""SFTP writes `.NAME.gpu-tui-partial` beside the target and renames it when complete."""


# ---------------------------------------------------------------------------------- paths


class _PathModule(Protocol):
    """What resolve_local needs of `posixpath` / `ntpath` (a bare module would type as Any)."""

    def join(self, a: str, /, *paths: str) -> str: ...
    def isabs(self, s: str, /) -> bool: ...
    def normpath(self, path: str, /) -> str: ...


def _expand_home(path: str, home: str, join: Callable[[str, str], str]) -> str:
    if path == "~":
        return home
    if path.startswith("~/") or path.startswith("~\\"):
        return join(home, path[2:])
    return path


def resolve_local(arg: str | None, configured: str | None, *, cwd: str, home: str, windows: bool = False) -> str:
    """The absolute local directory: the argument, else `sync.local`, else `cwd`; `~` is `home`."""
    mod: _PathModule = ntpath if windows else posixpath
    path = arg or configured or cwd
    path = _expand_home(path, home, mod.join)
    if not mod.isabs(path):
        path = mod.join(cwd, path)
    return str(mod.normpath(path))


def resolve_remote(arg: str | None, configured: str | None, workdir: str | None, *, home: str) -> str:
    """The absolute remote directory: the argument, else `sync.remote`, else `workdir`, else the
    remote home; relative (and `~/...`) paths are relative to the remote home."""
    path = arg or configured or workdir or home
    path = _expand_home(path, home, posixpath.join)
    if not path.startswith("/"):
        path = posixpath.join(home, path)
    path = posixpath.normpath(path)
    return "/" if path == "//" else path


# ------------------------------------------------------------------------------- excludes


def _translate(pattern: str) -> str:
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                out.append(".*")
                i += 2
                while i < n and pattern[i] == "*":
                    i += 1
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    whole_path: bool
    dir_only: bool


class Excludes:
    """Compiled rsync-style exclude patterns; `excluded("a/b.ckpt", is_dir=False)`."""

    def __init__(self, patterns: Iterable[str]) -> None:
        self.patterns = tuple(p for p in patterns if p.strip())
        self._rules = [self._compile(p) for p in self.patterns]

    @staticmethod
    def _compile(pattern: str) -> _Rule:
        dir_only = pattern.endswith("/") and pattern.rstrip("/") != ""
        pat = pattern.rstrip("/") if dir_only else pattern
        tail = ""
        if pat.endswith("/***"):
            pat, tail = pat[:-4], "(?:/.*)?"
        anchored = pat.startswith("/")
        pat = pat.lstrip("/")
        whole = anchored or "/" in pat or "**" in pat or tail != ""
        body = _translate(pat) + tail
        if not whole:
            regex = "^" + body + "$"
        elif anchored:
            regex = "^" + body + "$"
        else:
            regex = "^(?:.*/)?" + body + "$"
        return _Rule(re.compile(regex, re.DOTALL), whole, dir_only)

    def excluded(self, relpath: str, is_dir: bool) -> bool:
        """True when a path (relative to the transfer root, `/`-separated) is left out."""
        name = relpath.rsplit("/", 1)[-1]
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(relpath if rule.whole_path else name):
                return True
        return False

    def __bool__(self) -> bool:
        return bool(self._rules)


# --------------------------------------------------------------------------- sftp policy


def partial_name(name: str) -> str:
    """Where an unfinished copy of `name` lives, in the same directory."""
    return f".{name}{PARTIAL_SUFFIX}"


def is_partial(name: str) -> bool:
    return name.startswith(".") and name.endswith(PARTIAL_SUFFIX)


def needs_transfer(size: int, mtime: float, dst_size: int | None, dst_mtime: float | None) -> bool:
    """rsync's quick check: send unless the receiver has the same size and modification second."""
    if dst_size is None or dst_mtime is None:
        return True
    return size != dst_size or int(mtime) != int(dst_mtime)


# ------------------------------------------------------------------------- rsync output

_PROGRESS = re.compile(r"^\s*(\d[\d,.' ]*?)\s+(\d{1,3})%\s")
_VERSION = re.compile(r"^rsync\s+version\s+v?(\d+)\.(\d+)(?:\.(\d+))?")
_STAT_FIELDS = {
    "Number of regular files transferred": "files",
    "Total bytes sent": "bytes_sent",
    "Total bytes received": "bytes_received",
    "Literal data": "literal",
    "Matched data": "matched",
    "Total file size": "total_size",
    "Total transferred file size": "transferred_size",
}


def _number(text: str) -> int:
    digits = re.sub(r"[^\d]", "", text)
    return int(digits) if digits else 0


def parse_rsync_version(line: str) -> tuple[int, int, int] | None:
    """`rsync  version 3.2.7  protocol version 31` -> (3, 2, 7); None for openrsync and others."""
    m = _VERSION.match(line.strip())
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)


def parse_progress(line: str) -> tuple[int, int] | None:
    """One `--info=progress2` update -> (bytes done, percent), else None."""
    m = _PROGRESS.match(line)
    if not m:
        return None
    return _number(m.group(1)), int(m.group(2))


@dataclass(frozen=True)
class RsyncStats:
    """The figures of rsync's `--stats` block that a summary needs."""

    files: int = 0
    bytes_sent: int = 0
    bytes_received: int = 0
    literal: int = 0
    matched: int = 0
    total_size: int = 0
    transferred_size: int = 0


def parse_stats(lines: Iterable[str]) -> RsyncStats | None:
    """The `--stats` block (any lines around it are ignored); None when there was none."""
    found: dict[str, int] = {}
    for line in lines:
        key, sep, value = line.partition(":")
        field = _STAT_FIELDS.get(key.strip())
        if sep and field:
            found[field] = _number(value.split("(")[0])
    return RsyncStats(**found) if found else None


# ------------------------------------------------------------------------ progress/result


@dataclass(frozen=True)
class SyncProgress:
    """A progress report: bytes done of the total (None while unknown), the current file."""

    done: int
    total: int | None
    current: str = ""
    files_done: int = 0
    percent: float | None = None
    """rsync's own percentage where it gave one (its byte total is then an estimate)."""

    @property
    def fraction(self) -> float | None:
        if self.percent is not None:
            return min(1.0, self.percent / 100)
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


@dataclass(frozen=True)
class SyncSummary:
    """What a sync did. `bytes_sent` is what crossed the network towards the receiver."""

    direction: Direction
    method: Literal["rsync", "sftp"]
    local: str
    remote: str
    files_sent: int
    bytes_sent: int
    seconds: float
    dry_run: bool = False
    skipped_links: int = 0


def summary_line(s: SyncSummary, instance: str) -> str:
    """`pushed /home/me/proj -> gpu:/root/proj: 3 files, 1.2 MiB sent in 4.2 s (rsync)`."""
    arrow = f"{s.local} -> {instance}:{s.remote}" if s.direction == "push" else f"{instance}:{s.remote} -> {s.local}"
    files = ngettext("{n} file", "{n} files", s.files_sent).format(n=s.files_sent)
    size, seconds = format_bytes(s.bytes_sent), f"{s.seconds:.1f}"
    if s.dry_run:
        text = _("dry run, {paths}: would send {files}, {size} ({method}, {seconds} s)").format(
            paths=arrow, files=files, size=size, method=s.method, seconds=seconds
        )
    else:
        if s.direction == "push":
            done = _("pushed {paths}: {files}, {size} sent in {seconds} s ({method})")
        else:
            done = _("pulled {paths}: {files}, {size} sent in {seconds} s ({method})")
        text = done.format(paths=arrow, files=files, size=size, seconds=seconds, method=s.method)
    if s.skipped_links:
        text += ngettext(
            "; {n} symlink skipped (SFTP copies files only)",
            "; {n} symlinks skipped (SFTP copies files only)",
            s.skipped_links,
        ).format(n=s.skipped_links)
    return text


def summary_json(s: SyncSummary, instance: str) -> dict[str, object]:
    """`sync --json`: one object, snake_case, units in the key names."""
    return {
        "instance": instance,
        "direction": s.direction,
        "method": s.method,
        "local": s.local,
        "remote": s.remote,
        "files_sent": s.files_sent,
        "bytes_sent": s.bytes_sent,
        "seconds": round(s.seconds, 3),
        "dry_run": s.dry_run,
        "skipped_symlinks": s.skipped_links,
    }
