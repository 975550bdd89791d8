"""Read `conda env list`: its `--json` form and the text forms conda has printed over the years.

The JSON (`{"envs": [prefix, ...]}`) is what gpu-tui asks for; the text is the fallback for a
conda whose JSON is broken (a plugin printing to stdout, a half-upgraded install). The text
changed shape three times:

- conda < 4.4: base is called `root`: `root                  *  /opt/conda`;
- 4.4 .. 25.9: `f"{name:20} {'*' or ' '}  {prefix}"`; an env outside every envs dir has no name;
- 25.11 on: a legend (`# * -> active`, `# + -> frozen`) and `f"{name:20} {active} {frozen} {prefix}"`,
  where frozen was briefly a lock emoji.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass

__all__ = ["CondaEnvEntry", "parse_env_list_json", "parse_env_list_text", "env_names"]

# The prefix is the first absolute path on the line; names cannot hold "/" or spaces.
_LINE = re.compile(r"^(?P<head>[^/]*?)\s*(?P<prefix>/.*?)\s*$")
_MARKS = {"*", "+", "🔒"}


@dataclass(frozen=True, slots=True)
class CondaEnvEntry:
    """One line of `conda env list`."""

    name: str | None
    """The name conda shows (`base` for the root prefix, also when an old conda says `root`);
    None for an env conda lists by prefix only."""
    prefix: str
    """The env's absolute path, without a trailing slash."""
    active: bool = False
    """Marked `*`: active in the shell that ran conda (over SSH, usually base or none)."""
    frozen: bool = False
    """Marked `+` (or the lock): protected against changes (conda 25.11+)."""


def parse_env_list_json(text: str) -> list[str] | None:
    """The prefixes of `conda env list --json`, or None where the text is not that JSON."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("envs"), list):
        return None
    return [p.rstrip("/") or "/" for p in data["envs"] if isinstance(p, str) and p]


def parse_env_list_text(text: str) -> list[CondaEnvEntry]:
    """Every env line of the text form; comment, legend and blank lines are skipped."""
    entries: list[CondaEnvEntry] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            continue
        words = m["head"].split()
        marks = {w for w in words if w in _MARKS}
        names = [w for w in words if w not in _MARKS]
        name = names[0] if len(names) == 1 else None
        if name == "root":
            name = "base"
        entries.append(
            CondaEnvEntry(
                name=name,
                prefix=m["prefix"].rstrip("/") or "/",
                active="*" in marks,
                frozen=bool(marks & {"+", "🔒"}),
            )
        )
    return entries


def env_names(prefixes: list[str], root: str) -> dict[str, str]:
    """Name -> prefix as `conda -n NAME` understands it: `base` for the root, else the dir name.

    An env whose dir name repeats one already seen keeps only its first prefix (conda resolves
    `-n` to the first envs dir holding it, and these come in conda's order)."""
    root = root.rstrip("/")
    envs: dict[str, str] = {}
    for prefix in prefixes:
        prefix = prefix.rstrip("/")
        envs.setdefault("base" if prefix == root else posixpath.basename(prefix), prefix)
    return envs
