"""The hosts a user can import from `~/.ssh/config` (`gpu-tui add --from-ssh-config`).

Only what an instance entry needs is read: HostName, Port, User and the first IdentityFile.
The rules are OpenSSH's: keywords without case, `Key value` or `Key=value`, the first value
obtained for a host wins (so a `Host *` block at the top beats later blocks, one at the end only
fills gaps), `Include` nests files, and `Match` blocks are not evaluated (their settings are
left out: what they apply to depends on the moment of connecting).
"""

from __future__ import annotations

import glob
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _

__all__ = ["SshConfigHost", "read_ssh_config"]

MAX_INCLUDE_DEPTH = 16
_KEYWORD = re.compile(r"([^\s=]+)(?:\s*=\s*|\s+|$)(.*)")
_WANTED = ("hostname", "port", "user", "identityfile")


@dataclass(frozen=True)
class SshConfigHost:
    """One concrete `Host` alias and the settings that apply to it."""

    alias: str
    """The name after `Host`, as written: what `ssh ALIAS` connects to."""
    hostname: str
    """HostName (with `%h` expanded), default the alias."""
    port: int = 22
    """Port, default 22."""
    user: str | None = None
    """User, or None when the config names none."""
    identity_file: str | None = None
    """The first IdentityFile, as written (`~` kept), or None."""


@dataclass(frozen=True)
class _Line:
    """One setting, with the Host conditions under which it applies."""

    keyword: str
    """Lower-cased keyword."""
    value: str
    """The first argument, unquoted."""
    where: str
    """`file:line`, for messages."""
    conditions: tuple[tuple[str, ...], ...]
    """Pattern lists that must all match the alias (an `Include` inside a Host block nests them)."""
    never: bool
    """Inside a Match block (or an Include made from one): never applies here."""


@dataclass(frozen=True)
class _HostLine:
    """One `Host` line: its patterns and the conditions around it."""

    patterns: tuple[str, ...]
    """The patterns as written."""
    conditions: tuple[tuple[str, ...], ...]
    """Including this line's own patterns, last."""
    never: bool
    """Inside an Include made from a Match block."""


def _split_args(text: str, where: str) -> list[str]:
    """Words the way OpenSSH's argv_split makes them: quotes group, `#` at a word start ends the line."""
    args: list[str] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n or text[i] == "#":
            break
        word: list[str] = []
        while i < n and not text[i].isspace():
            ch = text[i]
            if ch in "\"'":
                end = text.find(ch, i + 1)
                if end == -1:
                    raise InputError(
                        _("{where}: a quote ({quote}) is not closed; close it or remove it").format(
                            where=where, quote=ch
                        )
                    )
                word.append(text[i + 1 : end])
                i = end + 1
            elif ch == "\\" and i + 1 < n and text[i + 1] in "\"'\\ ":
                word.append(text[i + 1])
                i += 2
            else:
                word.append(ch)
                i += 1
        args.append("".join(word))
    return args


def _pattern_matches(pattern: str, name: str) -> bool:
    # OpenSSH patterns know only * and ?, and compare without case
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern.lower())
    return re.fullmatch(regex, name.lower(), re.DOTALL) is not None


def _host_matches(patterns: tuple[str, ...], name: str) -> bool:
    """A Host line applies when some pattern matches and no negated one does."""
    hit = False
    for pattern in patterns:
        if pattern.startswith("!"):
            if _pattern_matches(pattern[1:], name):
                return False
        elif _pattern_matches(pattern, name):
            hit = True
    return hit


def _is_concrete(pattern: str) -> bool:
    return not pattern.startswith("!") and not any(c in pattern for c in "*?")


def _port(value: str, where: str) -> int:
    if not re.fullmatch(r"[0-9]{1,5}", value) or not 1 <= int(value) <= 65535:
        raise InputError(
            _("{where}: Port {value!r} is not a port number; write a number from 1 to 65535").format(
                where=where, value=value
            )
        )
    return int(value)


def _read_text(path: Path) -> str:
    try:
        # ssh reads bytes; a stray non-UTF-8 byte in a comment must not hide every host
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise InputError(
            _("{path}: cannot read the ssh config: {error}").format(path=path, error=exc.strerror or exc)
        ) from None


def _include_paths(pattern: str, base: Path) -> list[Path]:
    expanded = Path(pattern).expanduser()
    full = expanded if expanded.is_absolute() else base / expanded
    # glob(3) sorts, and ssh reads the files in that order
    return [Path(p) for p in sorted(glob.glob(str(full))) if Path(p).is_file()]


class _Reader:
    """Flattens a config and its includes into settings and Host lines, in file order."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.lines: list[_Line] = []
        self.hosts: list[_HostLine] = []

    def read(self, path: Path, outer: tuple[tuple[str, ...], ...], never: bool, depth: int) -> None:
        conditions, in_match = outer, False
        for lineno, raw in enumerate(_read_text(path).splitlines(), start=1):
            where = f"{path}:{lineno}"
            stripped = raw.strip()
            if not stripped or stripped.startswith("#"):
                continue
            m = _KEYWORD.fullmatch(stripped)
            if not m:
                continue
            keyword, args = m.group(1).lower(), _split_args(m.group(2), where)
            if keyword == "host":
                conditions, in_match = (*outer, tuple(args)), False
                self.hosts.append(_HostLine(tuple(args), conditions, never))
            elif keyword == "match":
                in_match = True
            elif keyword == "include":
                if depth >= MAX_INCLUDE_DEPTH:
                    raise InputError(
                        _(
                            "{where}: Include nests deeper than {depth} files; does a file include itself? Remove the loop"  # noqa: E501
                        ).format(where=where, depth=MAX_INCLUDE_DEPTH)
                    )
                for included in (p for arg in args for p in _include_paths(arg, self.base)):
                    self.read(included, conditions, never or in_match, depth + 1)
            elif keyword in _WANTED and args:
                if keyword == "port":
                    _port(args[0], where)  # ssh refuses a bad port even in a block that does not apply
                self.lines.append(_Line(keyword, args[0], where, conditions, never or in_match))

    def applies(self, conditions: tuple[tuple[str, ...], ...], never: bool, alias: str) -> bool:
        return not never and all(_host_matches(patterns, alias) for patterns in conditions)

    def aliases(self) -> Iterator[str]:
        seen: set[str] = set()
        for host in self.hosts:
            for pattern in host.patterns:
                if (
                    _is_concrete(pattern)
                    and pattern.lower() not in seen
                    and self.applies(host.conditions, host.never, pattern)
                ):
                    seen.add(pattern.lower())
                    yield pattern

    def resolve(self, alias: str) -> SshConfigHost:
        found: dict[str, str] = {}
        for line in self.lines:
            if line.keyword not in found and self.applies(line.conditions, line.never, alias):
                if line.keyword == "identityfile" and line.value.lower() == "none":
                    continue
                found[line.keyword] = line.value
        hostname = found.get("hostname", alias)
        # %h is the alias itself (HostName %h.example.com); %% a literal percent
        hostname = re.sub(r"%[h%]", lambda m: alias if m.group(0) == "%h" else "%", hostname)
        return SshConfigHost(
            alias=alias,
            hostname=hostname,
            port=int(found.get("port", "22")),
            user=found.get("user"),
            identity_file=found.get("identityfile"),
        )


def read_ssh_config(path: Path) -> list[SshConfigHost]:
    """Every concrete Host alias in `path` (and its Includes), in file order; [] when it is missing.

    Relative Include paths resolve in the directory of `path` (~/.ssh for the user's config).
    A Port that is not a number raises InputError naming the file and line.
    """
    if not path.is_file():
        return []
    reader = _Reader(path.parent)
    reader.read(path, (), False, 0)
    return [reader.resolve(alias) for alias in reader.aliases()]
