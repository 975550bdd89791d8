"""Package mirrors for conda and pip: each mirror's documented settings, and the file edits.

The settings are the ones each mirror's help page gives (docs/FIELD_NOTES.md, "Mirrors"):
`~/.condarc` gets `channels: [defaults]`, `default_channels` (main, r, msys2) and
`custom_channels` (conda-forge, pytorch) under the mirror's `anaconda/` tree, and pip's user
config gets `[global] index-url`. Only those keys change: the rest of either file is kept.
Pure text in, text out; services/mirrors.py reads and writes the files on the instance.
"""

from __future__ import annotations

import configparser
import json
import re
from dataclasses import dataclass

__all__ = [
    "IndexAnswer",
    "Mirror",
    "MIRRORS",
    "MIRROR_NAMES",
    "CONDA_KEYS",
    "condarc_with",
    "condarc_without",
    "pip_conf_with",
    "pip_conf_without",
    "conda_channel_url",
    "pip_index_url",
    "DEFAULT_CONDA",
    "DEFAULT_PIP",
    "probe_path",
    "parse_probe_lines",
]

DEFAULT_CONDA = "https://repo.anaconda.com/pkgs/main"
"""Where `defaults` points when nothing else is configured (conda's own default_channels)."""
DEFAULT_PIP = "https://pypi.org/simple"
"""pip's index when no config names one."""
DEFAULT_ALIAS = "https://conda.anaconda.org"


@dataclass(frozen=True, slots=True)
class IndexAnswer:
    """What a package index said when asked from the instance."""

    url: str
    status: int | None
    """The HTTP status, None when nothing answered."""
    ms: int | None
    error: str | None = None
    tool: str = ""
    """`conda` or `pip`, where the answer is about the index one of them uses."""

    @property
    def answers(self) -> bool:
        return self.status is not None and self.status < 400


@dataclass(frozen=True, slots=True)
class Mirror:
    name: str
    anaconda: str
    """The mirror's copy of repo.anaconda.com / anaconda.org (`.../anaconda`)."""
    pypi: str
    """Its PyPI simple index."""
    help_page: str


MIRRORS: dict[str, Mirror] = {
    m.name: m
    for m in (
        Mirror(
            "tuna",
            "https://mirrors.tuna.tsinghua.edu.cn/anaconda",
            "https://pypi.tuna.tsinghua.edu.cn/simple",
            "https://mirrors.tuna.tsinghua.edu.cn/help/anaconda/",
        ),
        Mirror(
            "ustc",
            "https://mirrors.ustc.edu.cn/anaconda",
            "https://mirrors.ustc.edu.cn/pypi/simple",
            "https://mirrors.ustc.edu.cn/help/anaconda.html",
        ),
        Mirror(
            "bfsu",
            "https://mirrors.bfsu.edu.cn/anaconda",
            "https://mirrors.bfsu.edu.cn/pypi/web/simple",
            "https://mirrors.bfsu.edu.cn/help/anaconda/",
        ),
        Mirror(
            "aliyun",
            "https://mirrors.aliyun.com/anaconda",
            "https://mirrors.aliyun.com/pypi/simple/",
            "https://developer.aliyun.com/mirror/anaconda",
        ),
    )
}
MIRROR_NAMES = (*MIRRORS, "default")
CONDA_KEYS = ("channels", "default_channels", "custom_channels", "channel_alias", "show_channel_urls")
"""The .condarc keys a mirror sets; `default` with no backup takes exactly these out."""

_TOP_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:(.*)$")


def _blocks(text: str) -> list[tuple[str | None, list[str]]]:
    """The file as (top-level key or None, its lines) in order: a key's block runs until the
    next line at column 0 that is not a list item or a comment."""
    out: list[tuple[str | None, list[str]]] = []
    for line in text.splitlines():
        m = _TOP_KEY.match(line)
        if m:
            out.append((m.group(1), [line]))
        elif out and out[-1][0] is not None and (not line.strip() or line[:1] in (" ", "\t", "-")):
            out[-1][1].append(line)
        else:
            out.append((None, [line]))
    return out


def condarc_without(text: str) -> str:
    """`text` without the channel keys (CONDA_KEYS); everything else as it was."""
    kept = [line for key, lines in _blocks(text) if key not in CONDA_KEYS for line in lines]
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) + "\n" if kept else ""


def condarc_with(text: str, mirror: Mirror) -> str:
    """`text` with the mirror's channels, as its help page writes them."""
    a = mirror.anaconda
    block = (
        "channels:\n  - defaults\nshow_channel_urls: true\ndefault_channels:\n"
        f"  - {a}/pkgs/main\n  - {a}/pkgs/r\n  - {a}/pkgs/msys2\n"
        f"custom_channels:\n  conda-forge: {a}/cloud\n  pytorch: {a}/cloud\n"
    )
    rest = condarc_without(text)
    return (rest + "\n" if rest else "") + block


_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*$")
_INDEX_KEY = re.compile(r"^\s*index[-_]url\s*[=:]", re.IGNORECASE)


def pip_conf_without(text: str) -> str:
    """`text` without `index-url` in `[global]` (comments and other keys kept)."""
    out, section = [], None
    for line in text.splitlines():
        m = _SECTION.match(line)
        if m:
            section = m.group(1).strip().lower()
        elif section == "global" and _INDEX_KEY.match(line):
            continue
        out.append(line)
    # a [global] header left with nothing under it goes too
    cleaned: list[str] = []
    for i, line in enumerate(out):
        m = _SECTION.match(line)
        if m and m.group(1).strip().lower() == "global":
            rest = out[i + 1 :]
            nxt = next((j for j, x in enumerate(rest) if _SECTION.match(x)), len(rest))
            if not any(x.strip() and not x.strip().startswith(("#", ";")) for x in rest[:nxt]):
                continue
        cleaned.append(line)
    while cleaned and not cleaned[-1].strip():
        cleaned.pop()
    return "\n".join(cleaned) + "\n" if cleaned else ""


def pip_conf_with(text: str, index_url: str) -> str:
    """`text` with `[global] index-url = index_url`, the one line replaced or added."""
    lines = pip_conf_without(text).splitlines()
    at = next(
        (i for i, x in enumerate(lines) if (m := _SECTION.match(x)) and m.group(1).strip().lower() == "global"), None
    )
    if at is None:
        lines = ["[global]", f"index-url = {index_url}"] + ([""] + lines if lines else [])
    else:
        lines.insert(at + 1, f"index-url = {index_url}")
    return "\n".join(lines) + "\n"


def _scalar(value: str) -> str:
    value = re.sub(r"\s+#.*$", "", value).strip()
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else value


def _condarc_values(text: str) -> dict[str, list[str] | dict[str, str] | str]:
    """The channel keys of a .condarc, read the way conda writes them (block or flow lists,
    a one-level map for custom_channels); other YAML is not needed here."""
    found: dict[str, list[str] | dict[str, str] | str] = {}
    for key, lines in _blocks(text):
        if key not in CONDA_KEYS:
            continue
        head = _scalar(lines[0].split(":", 1)[1])
        if head.startswith("[") and head.endswith("]"):
            found[key] = [_scalar(x) for x in head[1:-1].split(",") if x.strip()]
        elif head:
            found[key] = head
        elif key == "custom_channels":
            pairs = (x.strip().split(":", 1) for x in lines[1:] if ":" in x and not x.strip().startswith("#"))
            found[key] = {k.strip(): _scalar(v) for k, v in pairs}
        else:
            found[key] = [_scalar(x.strip()[1:]) for x in lines[1:] if x.strip().startswith("-")]
    return found


def conda_channel_url(condarc_texts: list[str]) -> str:
    """The first channel conda asks, from .condarc files in order of priority (first wins)."""
    values: dict[str, list[str] | dict[str, str] | str] = {}
    for text in condarc_texts:
        for key, value in _condarc_values(text).items():
            values.setdefault(key, value)
    channels = values.get("channels")
    first = channels[0] if isinstance(channels, list) and channels else "defaults"
    if first == "defaults":
        defaults = values.get("default_channels")
        return defaults[0] if isinstance(defaults, list) and defaults else DEFAULT_CONDA
    if "://" in first:
        return first
    custom = values.get("custom_channels")
    if isinstance(custom, dict) and first in custom:
        return f"{custom[first].rstrip('/')}/{first}"
    alias = values.get("channel_alias")
    return f"{alias.rstrip('/') if isinstance(alias, str) else DEFAULT_ALIAS}/{first}"


def pip_index_url(conf_texts: list[str], environ_index: str | None = None) -> str:
    """The index pip uses: PIP_INDEX_URL, else the last config file (in pip's loading order:
    global, legacy user, user) that sets `index-url` in [global] or [install]."""
    if environ_index:
        return environ_index
    found = DEFAULT_PIP
    for text in conf_texts:
        parser = configparser.RawConfigParser(strict=False)
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        for section in ("global", "install"):
            for key in ("index-url", "index_url"):
                if parser.has_option(section, key):
                    found = parser.get(section, key).strip()
    return found


def probe_path(tool: str, url: str) -> str:
    """What to ask for to see whether an index answers: a small document that exists on every
    mirror (a channel's noarch repodata, pip's own project page)."""
    return f"{url.rstrip('/')}/noarch/repodata.json" if tool == "conda" else f"{url.rstrip('/')}/pip/"


def parse_probe_lines(text: str) -> list[IndexAnswer]:
    """The probe's answers: one JSON line per URL (python3), or `@@curl URL CODE SECONDS` lines."""
    out: list[IndexAnswer] = []
    for line in text.splitlines():
        if line.startswith("@@curl "):
            parts = line.split(" ", 3)
            url, rest = parts[1], (parts[2] + " " + parts[3]) if len(parts) > 3 else ""
            code, _sep, secs = rest.partition(" ")
            if code.isdigit() and code != "000":
                ms = round(float(secs) * 1000) if secs.replace(".", "", 1).isdigit() else None
                out.append(IndexAnswer(url, int(code), ms))
            else:
                out.append(IndexAnswer(url, None, None, rest.strip()[:160] or "no answer"))
            continue
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "url" in row:
            status = row.get("status")
            out.append(
                IndexAnswer(
                    str(row["url"]),
                    status if isinstance(status, int) else None,
                    row.get("ms") if isinstance(row.get("ms"), int) else None,
                    str(row["error"]) if row.get("error") else None,
                )
            )
    return out
