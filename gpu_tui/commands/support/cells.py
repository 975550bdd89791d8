"""Widths in terminal cells for the CLI's tables, lines and --help: a Chinese character (and
its full-width punctuation) takes two cells, so `len()`, `str.ljust` and `textwrap` misalign
or overflow. Measured by wcwidth a character at a time, which gives what Rich's `cell_len`
gives the dashboard (a test compares them; `wcswidth`'s grapheme rules make a narrow letter
with a wide combining mark two cells where Rich counts one): the CLI stays free of Rich and
Textual. ASCII text is one cell a character and never loads wcwidth (it costs tens of ms to
import), so an English `gpu-tui status` starts as fast as before. Padding, cutting and wrapping
stay here: wcwidth's own wrap knows nothing of Chinese punctuation that must not start a line.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

__all__ = ["cell_len", "format_rows", "pad", "truncate", "wrap"]

_OPENING = set("([{<\"'‘“（［｛〈《「『【〔")
"""Characters that stay with what follows them (a line never ends with one)."""
_CLOSING = set(")]}>\"'’”,.;:!?%，。、；：！？）］｝〉》」』】〕…")
"""Characters that stay with what precedes them (a line never starts with one)."""


@lru_cache(maxsize=4096)
def _char_cells(ch: str) -> int:
    from wcwidth import wcwidth  # on use: only non-ASCII text needs its tables

    cells = wcwidth(ch)
    return 1 if cells < 0 else cells  # a control character: one cell, as len() counts it in ASCII text


def cell_len(text: str) -> int:
    """How many terminal cells `text` takes (one line, no control characters)."""
    if text.isascii():
        return len(text)
    return sum(_char_cells(ch) for ch in text)


def _head(text: str, width: int) -> str:
    """The longest start of `text` that fits in `width` cells."""
    used = 0
    for i, ch in enumerate(text):
        used += _char_cells(ch)
        if used > width:
            return text[:i]
    return text


def truncate(text: str, width: int) -> str:
    """`text` cut to at most `width` cells, ending in `…` when cut; a wide character is never
    split (the result may then be one cell narrower)."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    return _head(text, width - 1).rstrip(" ") + "…"


def pad(text: str, width: int, *, right: bool = False) -> str:
    """`text` filling exactly `width` cells: spaces after it (`right=True`: before it), or
    truncated (`truncate`) and then padded when it is wider."""
    text = truncate(text, width)
    fill = " " * max(0, width - cell_len(text))
    return fill + text if right else text + fill


def format_rows(rows: Sequence[Sequence[str]], *, right: Sequence[int] = (), gap: str = "  ") -> list[str]:
    """Rows of cells as lines, each column as wide (in cells) as its widest cell; the columns
    in `right` are right-aligned; trailing spaces dropped."""
    if not rows:
        return []
    widths = [max(cell_len(r[c]) for r in rows) for c in range(len(rows[0]))]
    return [
        gap.join(pad(cell, w, right=c in right) for c, (cell, w) in enumerate(zip(r, widths, strict=True))).rstrip()
        for r in rows
    ]


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(piece, space before it): an ASCII-like word is one piece, a wide character another; a
    line may break before any piece."""
    out: list[tuple[str, bool]] = []
    word, space = "", False

    def flush() -> None:
        nonlocal word, space
        if word:
            out.append((word, space))
            word, space = "", False

    for ch in text:
        if ch.isspace():
            flush()
            space = True
        elif _char_cells(ch) == 2:
            flush()
            out.append((ch, space))
            space = False
        else:
            word += ch
    flush()
    # keep punctuation with its neighbour: merge a closing piece into the one before it (when
    # no space separates them) and an opening piece into the one after it
    merged: list[tuple[str, bool]] = []
    for piece, spaced in out:
        if merged and not spaced and (piece[0] in _CLOSING or merged[-1][0][-1] in _OPENING):
            merged[-1] = (merged[-1][0] + piece, merged[-1][1])
        else:
            merged.append((piece, spaced))
    return merged


def wrap(text: str, width: int) -> list[str]:
    """`text` as lines of at most `width` cells, broken at spaces and between wide characters;
    runs of whitespace count as one space. A single piece wider than `width` (a long path) is
    left whole on its own line."""
    lines: list[str] = []
    line = ""
    for piece, spaced in _tokens(text):
        joined = line + (" " if spaced and line else "") + piece
        if not line or cell_len(joined) <= width:
            line = joined
        else:
            lines.append(line)
            line = piece
    if line:
        lines.append(line)
    return lines
