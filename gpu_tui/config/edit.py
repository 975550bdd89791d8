"""Atomic edits of the config file that keep the user's comments and layout.

`gpu-tui add` and `gpu-tui remove` change one `[[instances]]` entry. Only that entry's text is
touched: the file is cut at its table headers, the entry is edited with tomlkit (which keeps
comments and alignment inside it), and every other byte is copied through. A new entry is
appended at the end. The result is validated with `parse_settings` before it replaces the file,
through config/atomicfile (a temp file in the same directory, fsync, `os.replace`), so a bad edit
or a crash never leaves a half-written or invalid config. Secrets are refused before anything is written.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gpu_tui.config.atomicfile import write_atomic
from gpu_tui.config.settings import InstanceConfig, parse_settings
from gpu_tui.core.errors import ConfigError
from gpu_tui.core.i18n import _

__all__ = ["REMOVE", "find_instance", "remove_instance", "upsert_instance"]

REMOVE: Any = type("Remove", (), {"__repr__": lambda self: "REMOVE"})()
"""A field value meaning: delete this key from the entry (the edit form's emptied field)."""

HEADER = (
    "# gpu-tui configuration (see config.example.toml for every key).\n"
    "# Passwords never go here: they live in the OS keyring or in GPU_TUI_PASSWORD_<NAME>.\n"
)
_SECRET_WORDS = ("password", "passwd", "secret", "token")
_TABLE = re.compile(r"[ \t]*\[[ \t]*([^\[\]]+?)[ \t]*\][ \t]*(#.*)?")
_ARRAY = re.compile(r"[ \t]*\[\[[ \t]*([^\[\]]+?)[ \t]*\]\][ \t]*(#.*)?")
_KEY_PART = re.compile(r"""[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'""")
# InstanceConfig's field order is the order a new entry is written in, like config.example.toml
_FIELD_ORDER = {name: i for i, name in enumerate(InstanceConfig.model_fields)}


@dataclass(frozen=True)
class _Header:
    """A table header line: where it starts and which table it opens."""

    offset: int
    """Character offset of the line's start."""
    name: tuple[str, ...]
    """The dotted table name, unquoted."""
    array: bool
    """`[[name]]` rather than `[name]`."""


@dataclass(frozen=True)
class _Entry:
    """One `[[instances]]` element: its text span and its values."""

    start: int
    """Offset of its `[[instances]]` line."""
    end: int
    """Offset just past its last line that is not a blank or comment line."""
    tail_end: int
    """Offset of the next table header (or the end of the text)."""
    data: dict[str, Any]
    """Its values, as tomllib reads them."""


def _check_no_secrets(fields: Mapping[str, Any], where: str = "") -> None:
    for key, value in fields.items():
        if any(word in key.lower() for word in _SECRET_WORDS):
            raise ValueError(f"refusing to write {where}{key!r} to the config file: secrets go to the keyring")
        if isinstance(value, Mapping):
            _check_no_secrets(value, f"{where}{key}.")


def _split_name(text: str) -> tuple[str, ...]:
    return tuple(p[1:-1] if p[:1] in "\"'" else p for p in _KEY_PART.findall(text))


def _skip_string(text: str, i: int) -> int:
    """Offset just past the string that starts at `i` (basic, literal, or either multi-line kind)."""
    quote = text[i]
    multi = text.startswith(quote * 3, i)
    delim = quote * 3 if multi else quote
    j = i + len(delim)
    while j < len(text):
        if quote == '"' and text[j] == "\\":
            j += 2
            continue
        if not multi and text[j] == "\n":
            return j
        if text.startswith(delim, j):
            j += len(delim)
            # a multi-line string may end with one or two quotes right before its delimiter
            extra = 0
            while multi and extra < 2 and j < len(text) and text[j] == quote:
                j += 1
                extra += 1
            return j
        j += 1
    return j


def _headers(text: str) -> list[_Header]:
    """Table header lines, skipping any that are really inside a string or a multi-line array."""
    found: list[_Header] = []
    depth = 0
    i = 0
    at_line_start = True
    while i < len(text):
        if at_line_start and depth == 0:
            end = text.find("\n", i)
            line = text[i : len(text) if end == -1 else end].rstrip("\r")
            m = _ARRAY.fullmatch(line) or _TABLE.fullmatch(line)
            if m:
                found.append(_Header(i, _split_name(m.group(1)), m.re is _ARRAY))
                i = len(text) if end == -1 else end + 1
                continue
        at_line_start = False
        ch = text[i]
        if ch in "\"'":
            i = _skip_string(text, i)
            continue
        if ch == "#":
            end = text.find("\n", i)
            i = len(text) if end == -1 else end
            continue
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth = max(0, depth - 1)
        elif ch == "\n":
            at_line_start = True
        i += 1
    return found


def _content_end(text: str, start: int, stop: int) -> int:
    """Offset past the last line in [start, stop) that is neither blank nor only a comment."""
    lines = text[start:stop].splitlines(keepends=True)
    offset = start
    end = start
    for line in lines:
        offset += len(line)
        if line.strip() and not line.lstrip().startswith("#"):
            end = offset
    return end


def _entries(text: str, source: str) -> list[_Entry]:
    """The `[[instances]]` elements of `text`, cross-checked against tomllib."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            _("{source}: not valid TOML, so it cannot be edited: {error}; fix it by hand first").format(
                source=source, error=exc
            )
        ) from None
    instances = data.get("instances", [])
    headers = _headers(text)
    starts = [n for n, h in enumerate(headers) if h.array and h.name == ("instances",)]
    if not isinstance(instances, list) or len(starts) != len(instances):
        raise ConfigError(
            _(
                "{source}: 'instances' is not written as [[instances]] tables (an inline array?), so gpu-tui "
                "cannot edit it safely; rewrite it as [[instances]] tables, or edit the file by hand"
            ).format(source=source)
        )
    entries: list[_Entry] = []
    for index, n in enumerate(starts):
        following = (h for h in headers[n + 1 :] if h.name[:1] != ("instances",) or h.name == ("instances",))
        # [instances.sync] and the like belong to the element above them
        stop = next((h.offset for h in following), len(text))
        entries.append(_Entry(headers[n].offset, _content_end(text, headers[n].offset, stop), stop, instances[index]))
    return entries


def _toml_value(value: Any) -> Any:
    import tomlkit  # on first edit: the dashboard imports this module, and tomlkit costs 40 ms of start-up

    # a dict becomes an inline table (sync = {...}), as config.example.toml writes it
    if isinstance(value, Mapping):
        table = tomlkit.inline_table()
        table.update({k: _toml_value(v) for k, v in value.items() if v is not None})
        return table
    if isinstance(value, tuple):
        return list(value)
    return value


def _given(fields: Mapping[str, Any]) -> dict[str, Any]:
    given = {k: v for k, v in fields.items() if v is not None}
    return dict(sorted(given.items(), key=lambda kv: _FIELD_ORDER.get(kv[0], len(_FIELD_ORDER))))


def _render_new(fields: Mapping[str, Any]) -> str:
    import tomlkit  # on first edit: the dashboard imports this module, and tomlkit costs 40 ms of start-up

    table = tomlkit.table()
    for key, value in _given(fields).items():
        if value is not REMOVE:
            table[key] = _toml_value(value)
    doc = tomlkit.document()
    doc.append("instances", tomlkit.aot())
    doc["instances"].append(table)
    return tomlkit.dumps(doc)


def _render_update(segment: str, fields: Mapping[str, Any], keep_name: bool, source: str) -> str:
    import tomlkit.exceptions  # on first edit: the dashboard imports this module, and tomlkit costs 40 ms of start-up

    try:
        doc = tomlkit.parse(segment)
    except tomlkit.exceptions.TOMLKitError as exc:
        raise ConfigError(
            _("{source}: cannot edit this entry safely ({error}); edit it by hand").format(source=source, error=exc)
        ) from None
    if tomlkit.dumps(doc) != segment:
        raise ConfigError(
            _("{source}: cannot edit this entry without changing its layout; edit it by hand").format(source=source)
        )
    table = doc["instances"][0]
    for key, value in _given(fields).items():
        if key == "name" and keep_name:
            continue
        if value is REMOVE:
            if key in table:
                del table[key]
            continue
        # tomlkit keeps an existing key's place and trailing comment when its value changes
        table[key] = _toml_value(value)
    return tomlkit.dumps(doc)


def _same_login(entry: Mapping[str, Any], fields: Mapping[str, Any]) -> bool:
    host, user = fields.get("host"), fields.get("user") or "root"
    other = entry.get("host")
    if not isinstance(host, str) or not isinstance(other, str):
        return False
    return other.lower() == host.lower() and entry.get("user", "root") == user


def _match(entries: list[_Entry], fields: Mapping[str, Any], match_host_user: bool) -> tuple[int, bool] | None:
    """(index, matched by name) of the entry to update, or None to add one."""
    name = fields.get("name")
    for i, entry in enumerate(entries):
        if entry.data.get("name") == name:
            return i, True
    if match_host_user:
        same = [i for i, entry in enumerate(entries) if _same_login(entry.data, fields)]
        # with several (one gateway host, one port per machine) there is no telling which was re-issued
        if len(same) == 1:
            return same[0], False
    return None


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(_("{path}: cannot read config file: {error}").format(path=path, error=exc)) from None


def _newlines_like(original: str, text: str) -> str:
    # tomlkit writes new lines with \n; a CRLF file (edited on Windows) stays CRLF throughout
    return re.sub(r"(?<!\r)\n", "\r\n", text) if "\r\n" in original else text


def _write_atomic(path: Path, text: str) -> None:
    """Validate, then replace `path` atomically (its mode kept; 0600 for a new file: it names
    hosts and users, and sometimes key paths)."""
    try:
        parse_settings(text, str(path))
    except ConfigError as exc:
        raise ConfigError(
            _("{problem} (in the edited text; {path} was left unchanged)").format(problem=exc.message, path=path)
        ) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)


def _target(path: Path) -> Path:
    # a config kept in a dotfiles repo is often a symlink: edit the file, keep the link
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def find_instance(path: Path, fields: Mapping[str, Any], *, match_host_user: bool = True) -> str | None:
    """The name of the entry `upsert_instance(path, fields)` would update, or None if it would add one."""
    text = _read(_target(path))
    if text is None:
        return None
    entries = _entries(text, str(path))
    found = _match(entries, fields, match_host_user)
    return None if found is None else str(entries[found[0]].data.get("name"))


def upsert_instance(
    path: Path, fields: Mapping[str, Any], *, match_host_user: bool = True
) -> Literal["added", "updated"]:
    """Update the `[[instances]]` entry with the same name, else the only one with the same host
    and user (a provider re-issued it on a new port; it keeps its name, which its keyring
    password is stored under), else append a new entry. None values are left out (an update
    leaves those keys as they are). Creates the file with a short header when missing.

    Raises ValueError for a secret-looking key, ConfigError when the result would not be a valid
    config (the file is then left unchanged). Pass `match_host_user=False` when the user chose
    the name, so a second machine behind the same gateway host is added, not merged.
    """
    _check_no_secrets(fields)
    if not isinstance(fields.get("name"), str):
        raise ValueError("upsert_instance needs fields['name']")
    target = _target(path)
    text = _read(target)
    if text is None or not text.strip():
        _write_atomic(target, HEADER + "\n" + _render_new(fields))
        return "added"
    entries = _entries(text, str(path))
    found = _match(entries, fields, match_host_user)
    if found is None:
        # one blank line between the last entry and the new one, whatever the file ended with
        sep = "" if text.endswith("\n\n") else "\n" if text.endswith("\n") else "\n\n"
        _write_atomic(target, text + _newlines_like(text, sep + _render_new(fields)))
        return "added"
    index, by_name = found
    entry = entries[index]
    segment = text[entry.start : entry.end]
    updated = _newlines_like(segment, _render_update(segment, fields, keep_name=not by_name, source=str(path)))
    _write_atomic(target, text[: entry.start] + updated + text[entry.end :])
    return "updated"


def remove_instance(path: Path, name: str) -> bool:
    """Delete the `[[instances]]` entry called `name`; False when there is none (or no file).

    The comment and blank lines after the entry stay: they usually introduce what follows.
    """
    target = _target(path)
    text = _read(target)
    if text is None:
        return False
    entries = _entries(text, str(path))
    index = next((i for i, e in enumerate(entries) if e.data.get("name") == name), None)
    if index is None:
        return False
    entry = entries[index]
    before, after = text[: entry.start], text[entry.end :]
    # drop the blank lines the entry leaves behind, so no gap doubles
    after = after.lstrip("\r\n") if before.endswith("\n\n") or not before else after
    if not after.strip():
        before, after = before.rstrip() + "\n" if before.strip() else "", ""
    _write_atomic(target, before + after)
    return True
