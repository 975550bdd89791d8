"""Read the real nvidia-smi captures in tests/data/nvidia-smi/captures/ (standard library only).

A capture file is a short header, then one section per command, each introduced by a banner:

    ################################################################################
    # <phase> :: <what>
    # $ <the exact command>          (absent for derived sections)
    ################################################################################
    <raw output>

`load_capture(path)` returns the sections; `CsvTable.from_text()` reads a `--format=csv` body
(header with units, values with units); `CsvTable.render()` serves any subset of its fields the
way `nvidia-smi --query-gpu=F1,F2 --format=csv[,noheader][,nounits]` would print them. The unit
tests and the fake nvidia-smi of the integration tests share this module, so it must stay
dependency-free (no pytest, no gpu_tui imports).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CAPTURE_DIR",
    "CsvTable",
    "Section",
    "capture_files",
    "find_section",
    "load_capture",
    "parse_capture",
    "strip_unit",
]

CAPTURE_DIR = Path(__file__).resolve().parent / "data" / "nvidia-smi" / "captures"

_RULE = "#" * 80
_TITLE = re.compile(r"^# (?P<phase>[^:]+?) :: (?P<what>.+?)\s*$")
_HEADER_UNIT = re.compile(r"^(?P<name>\S+) \[(?P<unit>[^\]]+)\]$")


@dataclass(frozen=True)
class Section:
    """One command's output: `phase` (`capabilities`, `idle`, `load`), `what`, `command`, `body`."""

    phase: str
    what: str
    command: str | None
    body: str


def capture_files() -> list[Path]:
    """Every capture file (`*.txt`), sorted by name."""
    return sorted(CAPTURE_DIR.glob("*.txt"))


def parse_capture(text: str) -> list[Section]:
    """Split a capture's text into its sections, in file order (the file header is dropped)."""
    lines = text.splitlines()
    sections: list[Section] = []
    i = 0
    current: tuple[str, str, str | None, int] | None = None

    def close(end: int) -> None:
        if current is not None:
            phase, what, command, start = current
            body = "\n".join(lines[start:end]).strip("\n")
            sections.append(Section(phase, what, command, body + "\n" if body else ""))

    while i < len(lines):
        title = _TITLE.match(lines[i + 1]) if lines[i] == _RULE and i + 1 < len(lines) else None
        if title is None:
            i += 1
            continue
        close(i)
        j = i + 2
        command = None
        if j < len(lines) and lines[j].startswith("# $ "):
            command = lines[j][4:].rstrip()
            j += 1
        if j < len(lines) and lines[j] == _RULE:
            j += 1
        current = (title["phase"], title["what"], command, j)
        i = j
    close(len(lines))
    return sections


def load_capture(path: Path | str) -> list[Section]:
    """`parse_capture` of a file."""
    return parse_capture(Path(path).read_text(encoding="utf-8"))


def find_section(sections: list[Section], phase: str, what: str) -> Section | None:
    """The first section of `phase` whose `what` starts with `what` (e.g. `query-gpu`)."""
    for section in sections:
        if section.phase == phase and section.what.startswith(what):
            return section
    return None


def strip_unit(value: str, unit: str | None) -> str:
    """A value as `nounits` prints it: `"59 MiB"` with unit `MiB` -> `"59"`; others unchanged."""
    if unit and value.endswith(" " + unit):
        return value[: -len(unit) - 1]
    return value


@dataclass(frozen=True)
class CsvTable:
    """A `--format=csv` body: field names (canonical, no units), their units, and value rows."""

    fields: tuple[str, ...]
    units: tuple[str | None, ...]
    rows: tuple[tuple[str, ...], ...]

    @classmethod
    def from_text(cls, body: str) -> CsvTable:
        """Read a header line plus rows; fields and values are separated by `", "`."""
        lines = [line for line in body.splitlines() if line.strip()]
        if not lines:
            raise ValueError("empty csv body")
        fields: list[str] = []
        units: list[str | None] = []
        for column in lines[0].split(", "):
            m = _HEADER_UNIT.match(column)
            fields.append(m["name"] if m else column)
            units.append(m["unit"] if m else None)
        rows = []
        for line in lines[1:]:
            values = tuple(line.split(", "))
            if len(values) != len(fields):
                raise ValueError(f"{len(values)} values for {len(fields)} fields: {line[:80]!r}")
            rows.append(values)
        return cls(tuple(fields), tuple(units), tuple(rows))

    def column(self, field: str) -> int:
        """Index of `field` (KeyError when the capture lacks it)."""
        try:
            return self.fields.index(field)
        except ValueError:
            raise KeyError(field) from None

    def unit(self, field: str) -> str | None:
        """The unit the header gives `field` (`MiB`, `%`, `W`, ...), or None."""
        return self.units[self.column(field)]

    def values(self, row: int, fields: list[str] | tuple[str, ...], *, units: bool = True) -> list[str]:
        """Row `row`'s values for `fields`, with units or as `nounits` prints them."""
        out = []
        for field in fields:
            i = self.column(field)
            value = self.rows[row][i]
            out.append(value if units else strip_unit(value, self.units[i]))
        return out

    def render(self, fields: list[str] | tuple[str, ...], *, header: bool = True, units: bool = True) -> str:
        """What `--query-gpu=<fields> --format=csv[,noheader][,nounits]` prints for this table."""
        lines = []
        if header:
            names = []
            for field in fields:
                unit = self.unit(field)
                names.append(f"{field} [{unit}]" if unit else field)
            lines.append(", ".join(names))
        for row in range(len(self.rows)):
            lines.append(", ".join(self.values(row, fields, units=units)))
        return "".join(line + "\n" for line in lines)
