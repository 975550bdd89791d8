"""The progress bars one training-log line may draw, each a function `line -> Progress | None`
(core/trainlog/line tries them in order; the first bar found wins): tqdm (and Lightning's, which is
tqdm's), Keras (`[====]`, verbose=2, Keras 3's `━━━━`), Ultralytics >= 8.4's own bar, mmcv /
mmengine's ProgressBar, transformers' NotebookProgressBar drawn as text. docs/FIELD_NOTES.md
("Training logs") shows each form; a bar's label is read for run counters by
core/trainlog/counters.with_desc_counters.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from gpu_tui.core.trainlog.counters import parse_duration, rate_of, scaled
from gpu_tui.core.trainlog.model import Progress

__all__ = ["PROGRESS_FORMS", "PROGRESS_FORMS_UNFILTERED", "TIME"]

# tqdm: [desc: ][pct%|bar|] n[/total][unit] [elapsed[<remaining], rate[, postfix]]. The status
# block is found first (it opens with a literal `[`), then what stands right before it.
_SCALED = r"\d+(?:\.\d+)?[kMGTPEZY]?"
TIME = r"(?:\d+:)?\d+:\d\d"
_TQDM_STATUS = re.compile(r"\[(" + TIME + r")(?:<(" + TIME + r"|\?))?,\s*([^,\]]*+)[^\]]*+\]")
_TQDM_HEAD = re.compile(
    r"(?=\d)(?:(\d{1,3}(?:\.\d+)?)%\|[^|]*\|\s*)?"
    r"(" + _SCALED + r")(?:/(" + _SCALED + r"|\?))?[ ]?[A-Za-z]*[ ]?\Z"
)
# Keras: `  32/1875 [>....] - ETA: 3s - loss: ...`, `1875/1875 [====] - 5s 2ms/step - ...`,
# verbose=2 `1875/1875 - 5s - ...` and Keras 3's `━━━━` bar.
_KERAS = re.compile(r"\s*(\d+)/(\d+)\s+(?:\[[=>.]*\]|━+|-)\s*(?:-\s*)?(ETA: )?(\d+:\d\d(?::\d\d)?|\d+s)?")


# What the head's `n/total unit ` tail may hold (`\\d` beyond ASCII: see _head_start).
_TAIL_CHARS = "0123456789./? ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _head_start(line: str, start: int, end: int) -> int:
    """Where in line[start:end] a _TQDM_HEAD match can start at the earliest.

    sre tries _TQDM_HEAD at every digit and backtracks through every number, 20 us on a YOLO
    row (`294/299  2.3G  0.02307 ...  640:  45%|...| 17/38 `). A match is its `n/total unit `
    tail (only _TAIL_CHARS, so it starts after the last other character), or that tail after
    `pct%|bar|` (the last two `|`, `pct` the digits and dots before the `%`): search from
    there. A non-ASCII digit (`\\d` takes it) where a bound would fall gives no bound.
    """
    head = line[start:end]
    lo = len(head.rstrip(_TAIL_CHARS))
    if lo and head[lo - 1].isdecimal():
        return start
    close = head.rfind("|")
    if close > 0:
        opening = head.rfind("|", 0, close)
        if opening > 0 and head[opening - 1] == "%":
            pct = len(head[: opening - 1].rstrip("0123456789."))
            if pct and head[pct - 1].isdecimal():
                return start
            lo = min(lo, pct)
    return start + lo


def _tqdm(line: str, prefilter: bool = True) -> Progress | None:
    if "[" not in line or ":" not in line:
        return None
    status = _TQDM_STATUS.search(line)
    if status is None:
        return None
    end = status.start()
    start = max(0, end - 1000)
    m = _TQDM_HEAD.search(line, _head_start(line, start, end) if prefilter else start, end)
    if m is None:
        return None
    pct, n, total = m.groups()
    elapsed, eta, rate = status.groups()
    step = scaled(n)
    tot = scaled(total) if total and total != "?" else None
    if pct is not None:
        percent: float | None = float(pct)
    elif tot:
        percent = 100.0 * step / tot
    else:
        percent = None
    desc = line[: m.start()].strip().rstrip(":").strip() or None
    rate = rate.strip()
    return Progress(
        percent=percent,
        step=step,
        steps=tot,
        elapsed_seconds=parse_duration(elapsed),
        eta_seconds=parse_duration(eta) if eta else None,
        rate=rate_of(rate),
        rate_text=rate or None,
        desc=desc,
    )


def _keras(line: str) -> Progress | None:
    # The pattern alone would also take `10/20 -x`: a bar needs its `[...]`, `━` or ` - `.
    if "/" not in line or ("[" not in line and "━" not in line and " - " not in line):
        return None
    m = _KERAS.match(line)
    if m is None:
        return None
    step, total = int(m[1]), int(m[2])
    seconds = parse_duration(m[4]) if m[4] else None
    running = m[3] is not None or step < total
    return Progress(
        percent=100.0 * step / total if total else None,
        step=step,
        steps=total or None,
        elapsed_seconds=None if running else seconds,
        eta_seconds=seconds if running else None,
    )


# Ultralytics >= 8.4: `desc: 0% ──────────── 3/6848 2.0it/s 2.3s<58:08` (rate and ETA once known).
_ULTRA = re.compile(
    r"(\d{1,3})% [━─╸╺]+ (\d+)/(\d+)(?: (\d+(?:\.\d+)?(?:it/s|s/it)))? (\d+(?:\.\d+)?s|" + TIME + r")"
    r"(?:<(\d+(?:\.\d+)?s|" + TIME + r"))?"
)


def _ultralytics(line: str) -> Progress | None:
    if "% " not in line or "/" not in line:
        return None
    m = _ULTRA.search(line)
    if m is None:
        return None
    desc = line[: m.start()].strip().rstrip(":").strip() or None
    return Progress(
        percent=float(m[1]),
        step=int(m[2]),
        steps=int(m[3]) or None,
        elapsed_seconds=parse_duration(m[5]),
        eta_seconds=parse_duration(m[6]) if m[6] else None,
        rate=rate_of(m[4]) if m[4] else None,
        rate_text=m[4],
        desc=desc,
    )


# mmcv / mmengine's ProgressBar (every OpenMMLab evaluation): `[>>>>>     ] 3217/3849, 4.0
# task/s, elapsed: 799s, ETA:   157s` (no percent printed; the ETA is padded to five places).
_MMCV = re.compile(r"\[[>\s]*\]\s*(\d+)/(\d+), (\d+(?:\.\d+)?) task/s, elapsed: (\d+)s, ETA:\s*(\d+)s")


def _mmcv(line: str) -> Progress | None:
    if " task/s, elapsed: " not in line:
        return None
    m = _MMCV.search(line)
    if m is None:
        return None
    step, total = int(m[1]), int(m[2])
    return Progress(
        percent=100.0 * step / total if total else None,
        step=step,
        steps=total or None,
        elapsed_seconds=int(m[4]),
        eta_seconds=int(m[5]),
        rate=float(m[3]),
        rate_text=f"{m[3]} task/s",
    )


def _tqdm_unfiltered(line: str) -> Progress | None:
    return _tqdm(line, prefilter=False)


# A line draws one bar: the first form that finds one wins.
# transformers' NotebookProgressBar drawn as text (Unsloth, a notebook's output saved to a log):
# `[ 22/290 02:50 < 38:04, 0.12 it/s, Epoch 0.36/5]`: the run's steps, and its epochs.
_NOTEBOOK = re.compile(
    r"\[\s*(\d+)/(\d+) (" + TIME + r") < (" + TIME + r")(?:, ([\d.]+ it/s))?(?:, Epoch [\d.]+/(\d+))?\]"
)


def _notebook(line: str) -> Progress | None:
    if " < " not in line:
        return None
    m = _NOTEBOOK.search(line)
    if m is None:
        return None
    step, steps = int(m[1]), int(m[2])
    return Progress(
        percent=100.0 * step / steps if steps else None,
        step=step,
        steps=steps or None,
        elapsed_seconds=parse_duration(m[3]),
        eta_seconds=parse_duration(m[4]),
        rate=rate_of(m[5]) if m[5] else None,
        rate_text=m[5],
        epochs=int(m[6]) if m[6] else None,
        scope="steps",
    )


PROGRESS_FORMS: tuple[Callable[[str], Progress | None], ...] = (_tqdm, _keras, _ultralytics, _mmcv, _notebook)
PROGRESS_FORMS_UNFILTERED: tuple[Callable[[str], Progress | None], ...] = (_tqdm_unfiltered, *PROGRESS_FORMS[1:])
