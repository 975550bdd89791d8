"""Tables in training logs: YOLO's epoch table and its validation table.

YOLOv5/v7 and Ultralytics print a header line, then one row per bar redraw under it:

    Epoch   gpu_mem       box       obj       cls     total    labels  img_size
     0/99     2.73G    0.0108  0.003705         0    0.0145        15       640:   2%|▏  | 1/54 [...]
    Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size
    1/100      6.21G      3.795      9.549    0.02906        170        512: 0% ──── 3/6848 ...
    Class     Images  Instances      Box(P          R      mAP50  mAP50-95): 100%|███| 4/4 [...]
      all        128        929      0.681      0.594      0.666      0.489

`header_columns` (stateless, used by core/trainlog/line) knows a header; `Table` (state, used by
core/trainlog/summary) maps the rows under it to metrics named by their column. A loss column the
tool totals itself (`total`) is the loss; components (`box_loss`, `cls_loss`, `dfl_loss`) are
metrics only, never summed. YOLOv5/v7 count epochs from 0 (`0/99` is the first of 100; their
header has an `obj` column): their rows' Progress says so (scope `zero-last`).
"""

from __future__ import annotations

import re

from gpu_tui.core.trainlog.model import LineInfo, replace

__all__ = ["header_columns", "Table"]

_FIRST = ("Epoch", "Class")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?", re.IGNORECASE)
_CLEAN = re.compile(r"^\w+\(|\)$")


def header_columns(text: str) -> tuple[str, ...] | None:
    """The column names of a YOLO table header (`Epoch GPU_mem box_loss ...`, `Class Images ...`)."""
    stripped = text.lstrip()
    if not stripped.startswith(_FIRST):
        return None
    tokens = stripped.split()
    if len(tokens) < 4 or tokens[0] not in _FIRST or any(_NUMBER.fullmatch(t) for t in tokens):
        return None
    if tokens[0] == "Epoch" and not any("mem" in t.lower() or "loss" in t for t in tokens):
        return None
    if tokens[0] == "Class" and "Images" not in tokens:
        return None
    return tuple(_CLEAN.sub("", t.rstrip(":")) for t in tokens)


def _row(columns: tuple[str, ...], text: str) -> dict[str, float] | None:
    tokens = text.split()
    if len(tokens) != len(columns):
        return None
    found: dict[str, float] = {}
    for name, token in zip(columns[1:], tokens[1:], strict=True):
        if _NUMBER.fullmatch(token):
            found[name.lower()] = float(token)
    return found


class Table:
    """The latest epoch and validation headers, and what the rows under them say."""

    __slots__ = ("epoch_columns", "val_columns", "zero_based")

    def __init__(self) -> None:
        self.epoch_columns: tuple[str, ...] | None = None
        self.val_columns: tuple[str, ...] | None = None
        self.zero_based = False

    def apply(self, line: str, info: LineInfo) -> LineInfo:
        """`info` for `line` with a row's metrics (and a YOLOv5 row's epoch counting) added."""
        columns = info.columns
        if columns is not None:
            if columns[0] == "Epoch":
                self.epoch_columns = columns
                self.zero_based = any(c.lower() in ("obj", "obj_loss") for c in columns)
            else:
                self.val_columns = columns
            return info
        p = info.progress
        if p is not None and p.scope == "yolo":
            cols = self.epoch_columns
            row = _row(cols, p.desc or "") if cols is not None else None
            zero = self.zero_based or p.epoch == 0
            self.zero_based = zero
            p = replace(p, scope="zero-last" if zero else "inner")
            if row is None:
                return replace(info, progress=p)
            if "total" in row:
                row["loss"] = row["total"]
            return replace(info, progress=p, metrics=row)
        cols = self.val_columns
        if cols is not None and line.lstrip().startswith("all "):
            row = _row(cols, line)
            if row is not None:
                return replace(info, metrics=row)
        return info
