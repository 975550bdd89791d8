"""Map a TOML key path such as ("instances", 1, "port") to the line it is written on.

tomllib keeps no positions, and a config error must name its line, so this scans the text with
the few shapes a hand-written config uses: tables, arrays of tables, `key = value`, dotted keys
and one-line inline tables.
"""

from __future__ import annotations

import re

__all__ = ["locate"]

_TABLE = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_ARRAY = re.compile(r"^\s*\[\[\s*([^\[\]]+?)\s*\]\]\s*(#.*)?$")
_KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")
_INLINE_KEY = re.compile(r"""[{,]\s*([A-Za-z0-9_-]+|"[^"]*")\s*=""")

Path = tuple[str | int, ...]


def _split_dotted(key: str) -> tuple[str, ...]:
    parts = re.findall(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""", key)
    return tuple(p.strip("\"'") for p in parts)


def _index(text: str) -> dict[Path, int]:
    where: dict[Path, int] = {}
    counts: dict[tuple[str, ...], int] = {}
    current: Path = ()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if m := _ARRAY.match(line):
            name = _split_dotted(m.group(1))
            idx = counts.get(name, -1) + 1
            counts[name] = idx
            current = (*name, idx)
            where.setdefault(current, lineno)
            continue
        if m := _TABLE.match(line):
            name = _split_dotted(m.group(1))
            # [instances.sync] belongs to the latest [[instances]] element
            if name[:1] in {k[:1] for k in counts} and len(name) > 1:
                head = name[:1]
                current = (*head, counts[head], *name[1:])
            else:
                current = name
            where.setdefault(current, lineno)
            continue
        if m := _KEY.match(line):
            key_path = (*current, *_split_dotted(m.group(1)))
            where.setdefault(key_path, lineno)
            brace = line.find("{", m.end())
            if brace != -1:
                for sub in _INLINE_KEY.finditer(line, brace):
                    where.setdefault((*key_path, sub.group(1).strip("\"'")), lineno)
    return where


def locate(text: str, path: Path) -> int | None:
    """The line of `path`, or of its nearest written ancestor; None when nothing matches."""
    where = _index(text)
    for cut in range(len(path), 0, -1):
        line = where.get(tuple(path[:cut]))
        if line is not None:
            return line
    return None
