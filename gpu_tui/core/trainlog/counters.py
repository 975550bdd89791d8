"""Run counters one training-log line prints: epoch k of N, a global step, an ETA for the run.

The forms (docs/FIELD_NOTES.md, "Training logs"), each one entry of `_COUNTER_FORMS`:

- an epoch header alone: Keras `Epoch 17/100`, the PyTorch tutorial's `Epoch 0/59`, `##### Epoch 3 #####`;
- Megatron / Megatron-DeepSpeed ` iteration      120/    5000 | ... elapsed time per iteration (ms):
  450.3 | ... lm loss: 2.304512E+00 |` (the ETA is the iterations left times that time);
- PaddleOCR `epoch: [3/500], global_step: 40, ... eta: 1 day, 2:03:04`; PaddleDetection
  `Epoch: [0] [  20/782] ... eta: 3:04:05` (counts epochs from 0);
- mmdet 2.x `Epoch [1][50/1000]	lr: ..., eta: 1 day, 2:03:04, ...`, mmengine `Epoch(train)  [1][ 50/1000]
  ... eta: 2:03:04`, their iteration loops `Iter [50/90000]`, `Iter(train) [  50/90000]`;
- OpenNMT `Step 200/700; acc: ...; 120 sec` (ETA from the seconds since the start);
- fairseq `epoch 001:  15010 / 34323 loss=6.627, ..., num_updates=15011` and its tqdm label `epoch 001`;
- timm `Train: 0 [ 100/1251 (  8%)]` (counts epochs from 0);
- a tqdm label `Epoch 3/10`, Lightning's `Epoch 3` (from 0), a YOLO row `3/100  2.58G  1.234 ...`
  (YOLOv5/v7 count from 0: core/trainlog/tables says which);
- plain prints `step 100/1000`, `iter: 120/5000`, `Epoch [3/10]`, `epoch: 2`, `Epoch: 55/167 (996/1926)`.

`epochs_hint` / `steps_hint` read how long the run is from the lines that announce it (HF's
`Num Epochs = 3` and `Total optimization steps = 1,000`, timm's `Scheduled epochs: 300`, a config's
`max_epochs=12`, YOLO's `Starting training for 100 epochs`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from gpu_tui.core.trainlog.model import Progress, replace

__all__ = [
    "counters",
    "with_desc_counters",
    "epochs_hint",
    "steps_hint",
    "parse_long_duration",
    "line_clock",
    "lowered",
    "parse_duration",
    "scaled",
    "rate_of",
]

_EPOCH_HEADER = re.compile(
    r"\s*[#=*-]*\s*Epoch:?\s*\[?\s*(\d+)\s*(?:/\s*(\d+))?\s*\]?\s*[#=*-]*\s*:?\s*$", re.IGNORECASE
)
_MEGATRON = re.compile(r".*?\biteration\s+(\d+)\s*/\s*(\d+)\s*\|")
_MEGATRON_MS = re.compile(r"elapsed time per iteration \(ms\):\s*([\d.]+)")
_PADDLE_OCR = re.compile(r".*?\bepoch: \[(\d+)/(\d+)\], global_step: (\d+)")
_PADDLE_DET = re.compile(r".*?\bEpoch: \[(\d+)\]\s*\[\s*(\d+)\s*/\s*(\d+)\]")
_MM_EPOCH = re.compile(r".*?\bEpoch(?:\(train\))?\s*\[(\d+)\]\s*\[\s*(\d+)\s*/\s*(\d+)\]")
_MM_ITER = re.compile(r".*?\bIter(?:\(train\))?\s*\[\s*(\d+)\s*/\s*(\d+)\]")
_OPENNMT = re.compile(r".*?\bStep\s+(\d+)\s*/\s*(\d+);")
_OPENNMT_SEC = re.compile(r";\s*(\d+) sec\b")
_FAIRSEQ = re.compile(r".*?\bepoch (\d+)\s*:\s+(\d+)\s*/\s*(\d+)\b")
_FAIRSEQ_EPOCH = re.compile(r"\|?\s*epoch (\d{3,})\b(?! *:)")
_UPDATES = re.compile(r"\bnum_updates[= ](\d+)")
# timm prints its own percent, batch_idx / last_idx (`[  32/33 (100%)]`): that one is the bar's.
_TIMM = re.compile(r".*?\bTrain: (\d+) \[\s*(\d+)\s*/\s*(\d+)(?: \(\s*(\d+)%\))?")
_STEP = re.compile(
    r"(?:.*?[^\w/.-])?(?:global[ _])?(?:step|iter(?:ation)?)s?\s*[:=]?\s*\[?\s*(\d+)\s*/\s*(\d+)\b(?![./]\d)",
    re.IGNORECASE,
)
_EPOCH_OF = re.compile(r"(?:.*?[^\w/.-])?epoch\s*[:=]?\s*\[?\s*(\d+)\s*/\s*(\d+)\b(?![./]\d)", re.IGNORECASE)
_INNER_PAREN = re.compile(r"\s*\(\s*(\d+)\s*/\s*(\d+)\s*\)")
_EPOCH_ALONE = re.compile(r"(?:.*?[^\w/.-])?epoch(?:\s*[:=]\s*|\s+)(\d+)(?=\s|$|[,|;)\]]|:\s)", re.IGNORECASE)
# A step counter without a total: Caffe `Iteration 1853800, loss = 0.25`, `step 100 | loss 2.31`.
_STEP_ALONE = re.compile(r"(?:.*?[\s|,;\]])?(?:Iteration|iteration|Iter|iter|Step|step)\s*[:=]?\s*(\d+)(?=[\s,;|]|$)")
# Lightning's last word: "`Trainer.fit` stopped: `max_steps=400000` reached."
_FIT_STOPPED = re.compile(r".*`Trainer\.fit` stopped: `max_(steps|epochs)=(\d+)` reached")
_GLOBAL_STEP = re.compile(r"\bglobal[_ ]step\s*[:=]?\s*(\d+)", re.IGNORECASE)
# A trainer's own JSON log line: ms-swift `'global_step/max_steps': '57/176'` (console dicts and
# logging.jsonl), LLaMA-Factory's trainer_log.jsonl `"current_steps": 202, "total_steps": 5100`;
# both with `remaining_time` (`2h 55m 51s`, `2 days, 12:56:35`).
_TRAINER_STEPS = re.compile(
    r""".*?['"](?:global_step/max_steps['"]:\s*['"](\d+)/(\d+)['"]|current_steps['"]:\s*(\d+),\s*['"]total_steps['"]:\s*(\d+))"""
)
_REMAINING = re.compile(r"""['"]remaining_time['"]:\s*['"]([^'"]{1,40})['"]""")
_UNITS = re.compile(r"(\d+)\s*([dhms])\b")
_ETA = re.compile(r"\beta:?\s+(?:(\d+) days?, )?(\d+):(\d\d):(\d\d)\b", re.IGNORECASE)
# `2024-05-01 12:00:00`, `2024/05/01 12:00:00`, `2024-05-01T12:00:00`; PaddleDetection `[05/01 12:00:00]`.
_CLOCK = re.compile(r"(?:(\d{4})[-/])?(\d\d)[-/](\d\d)[ T_](\d\d):(\d\d):(\d\d)")

# Desc labels of tqdm bars: `Epoch 3/10`, Lightning `Epoch 3`, fairseq `epoch 001`, YOLO rows.
_DESC_EPOCH_OF = re.compile(r"(?:.*?\b)?epoch\s*[:=]?\s*\[?\s*(\d+)\s*/\s*(\d+)\b", re.IGNORECASE)
_DESC_LIGHTNING = re.compile(r"Epoch (\d+):?\Z")
_DESC_FAIRSEQ = re.compile(r"epoch (\d{3,})\Z")
_DESC_EP = re.compile(r"(?<![A-Za-z])Ep_?(\d+)(?!\d)")
# A bar over the run's optimizer steps: diffusers' examples `Steps:`, kohya's `steps:`, SimpleTuner
# `Epoch 52/65, Steps:`, verl's `Training Progress:`.
_STEPS_LABELS = ("Steps", "steps", "Step", "Training Progress")
_DESC_STEPS = re.compile(r"(?:Epoch (\d+)/(\d+), )?(?:Steps|steps|Step|Training steps|Training Progress)\Z")
_DESC_YOLO = re.compile(r"\s*(\d+)/(\d+)\s+\d+(?:\.\d+)?[GMK]?\s")

_EPOCHS_HINT = re.compile(
    r".*?(?:\bmax_epochs?\b|\btotal_epochs\b|\bnum_train_epochs\b|\bnum_epochs\b|\bepoch_num\b"
    r"|Num Epochs\b|Scheduled epochs\b)"
    r"['\"]?\s*[:=]\s*(\d[\d,]*)(?:\.0)?\b"
    r"|.*?\bStarting training for (\d+) epochs\b|.*?\bmax: (\d+) epochs\b",
)
_STEPS_HINT = re.compile(
    r".*?(?:Total optimization steps|\bTotal steps\b|\bmax_steps\b|\bmax_iters\b|\btrain_iters\b|\btotal_steps\b"
    r"|\btrain_steps\b)"
    r"['\"]?\s*[:=]\s*(\d[\d,]*)\b"
)
# The hints' prefilters: a word each branch above needs, searched once, before the `.*?` patterns
# (20 us on a long line); keep them beside the patterns (tests/unit/test_logprefilter.py).
_EPOCHS_WORDS = re.compile(
    "max_epoch|total_epochs|num_train_epochs|num_epochs|epoch_num|Num Epochs|Scheduled epochs"
    "|Starting training for |max: "
)
_STEPS_WORDS = re.compile(
    "Total optimization steps|Total steps|max_steps|max_iters|train_iters|total_steps|train_steps"
)


# tqdm's and Keras' units (core/trainlog/line's bars read them).
_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*([kMGTPEZY]?)([A-Za-z]*)/([A-Za-z]+)")
_SCALE = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18, "Z": 10**21, "Y": 10**24}


@lru_cache(maxsize=1024)  # a bar's times repeat over its states: `00:12` is read once
def parse_duration(text: str) -> int | None:
    """tqdm/Keras times in seconds: `00:12`, `1:02:03`, `3s`; None for `?` or anything else."""
    text = text.strip()
    if text.endswith("s") and text[:-1].replace(".", "", 1).isdigit() and text[:-1].isascii():
        return round(float(text[:-1]))
    parts = text.split(":")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() and p.isascii() for p in parts):
        return None
    seconds = 0
    for p in parts:
        seconds = seconds * 60 + int(p)
    return seconds


def scaled(text: str) -> int:
    """tqdm's counts: `450`, `1.50k` -> 1500."""
    if text[-1].isdigit():
        return int(float(text)) if "." in text else int(text)
    return int(round(float(text[:-1]) * _SCALE[text[-1]]))


def rate_of(text: str) -> float | None:
    """Items per second from a rate as drawn: `36.10it/s`, `1.2kit/s`, `1.23s/it` (turned over)."""
    m = _RATE.search(text)
    if m is None:
        return None
    value = float(m[1]) * _SCALE[m[2]]
    if m[3] == "s" and m[4] != "s":  # tqdm's inverse form for slow loops: seconds per item
        return 1.0 / value if value else None
    return value if m[4] == "s" else None


def parse_long_duration(days: str | None, h: str, m: str, s: str) -> int:
    return (int(days) if days else 0) * 86400 + int(h) * 3600 + int(m) * 60 + int(s)


def _eta(line: str) -> int | None:
    if "eta" not in line and "ETA" not in line:
        return None
    m = _ETA.search(line)
    return parse_long_duration(m[1], m[2], m[3], m[4]) if m else None


def _days_from_civil(y: int, m: int, d: int) -> int:
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def line_clock(line: str) -> float | None:
    """The timestamp near a line's start, in seconds on a naive clock (no time zone), or None."""
    m = _CLOCK.search(line, 0, 48)
    if m is None:
        return None
    year = int(m[1]) if m[1] else 2000
    month, day = int(m[2]), int(m[3])
    if not (1 <= month <= 12 and 1 <= day <= 31):
        return None
    return _days_from_civil(year, month, day) * 86400.0 + int(m[4]) * 3600 + int(m[5]) * 60 + int(m[6])


def _pct(step: int, steps: int | None) -> float | None:
    return 100.0 * step / steps if steps else None


def _int(text: str) -> int:
    return int(text.replace(",", ""))


# ----------------------------------------------------------------------------- forms


def _megatron(line: str) -> Progress | None:
    m = _MEGATRON.match(line)
    if m is None:
        return None
    step, steps = int(m[1]), int(m[2])
    ms = _MEGATRON_MS.search(line, m.end())
    eta = round((steps - step) * float(ms[1]) / 1000) if ms and steps >= step else None
    return Progress(percent=_pct(step, steps), step=step, steps=steps, run_eta_seconds=eta, scope="run")


def _paddle(line: str) -> Progress | None:
    m = _PADDLE_OCR.match(line)
    if m is not None:
        return Progress(
            epoch=int(m[1]), epochs=int(m[2]), global_step=int(m[3]), run_eta_seconds=_eta(line), scope="inner"
        )
    m = _PADDLE_DET.match(line)
    if m is not None:
        step, steps = int(m[2]), int(m[3])
        return Progress(
            percent=_pct(step, steps), step=step, steps=steps, epoch=int(m[1]), scope="zero", run_eta_seconds=_eta(line)
        )
    return None


def _remaining(text: str) -> int | None:
    """`2h 55m 51s`, `2d 6h 14m 20s`, `0s` (ms-swift); `2 days, 12:56:35`, `2:30:48` (LLaMA-Factory)."""
    m = _ETA.search("eta " + text)
    if m is not None:
        return parse_long_duration(m[1], m[2], m[3], m[4])
    parts = _UNITS.findall(text)
    if not parts:
        return parse_duration(text.strip())
    return sum(int(n) * {"d": 86400, "h": 3600, "m": 60, "s": 1}[u] for n, u in parts)


def _trainer_json(line: str) -> Progress | None:
    m = _TRAINER_STEPS.match(line)
    if m is None:
        return None
    step, steps = int(m[1] or m[3]), int(m[2] or m[4])
    left = _REMAINING.search(line, m.end())
    eta = _remaining(left[1]) if left is not None else None
    return Progress(percent=_pct(step, steps), step=step, steps=steps, run_eta_seconds=eta, scope="run")


def _mm(line: str) -> Progress | None:
    m = _MM_EPOCH.match(line) if "Epoch" in line else None
    if m is not None:
        step, steps = int(m[2]), int(m[3])
        return Progress(
            percent=_pct(step, steps),
            step=step,
            steps=steps,
            epoch=int(m[1]),
            run_eta_seconds=_eta(line),
            scope="inner",
        )
    m = _MM_ITER.match(line) if "Iter" in line else None
    if m is not None:
        step, steps = int(m[1]), int(m[2])
        return Progress(percent=_pct(step, steps), step=step, steps=steps, run_eta_seconds=_eta(line), scope="run")
    return None


def _opennmt(line: str) -> Progress | None:
    m = _OPENNMT.match(line)
    if m is None:
        return None
    step, steps = int(m[1]), int(m[2])
    sec = _OPENNMT_SEC.search(line, m.end())
    eta = round(int(sec[1]) * (steps - step) / step) if sec and step and steps >= step else None
    return Progress(percent=_pct(step, steps), step=step, steps=steps, run_eta_seconds=eta, scope="run")


def _fairseq(line: str) -> Progress | None:
    m = _FAIRSEQ.match(line)
    updates = _UPDATES.search(line)
    if m is not None:
        step, steps = int(m[2]), int(m[3])
        return Progress(
            percent=_pct(step, steps),
            step=step,
            steps=steps,
            epoch=int(m[1]),
            scope="inner",
            global_step=int(updates[1]) if updates else None,
        )
    m = _FAIRSEQ_EPOCH.match(line)
    if m is not None and updates is not None:  # the epoch's summary line
        return Progress(epoch=int(m[1]), global_step=int(updates[1]), scope="summary")
    return None


def _timm(line: str) -> Progress | None:
    m = _TIMM.match(line)
    if m is None:
        return None
    step, steps = int(m[2]), int(m[3])
    percent = float(m[4]) if m[4] else _pct(step, steps)
    return Progress(percent=percent, step=step, steps=steps, epoch=int(m[1]), scope="zero")


def lowered(line: str) -> str | None:
    """line.lower() for the words of IGNORECASE patterns; None where it could miss them.

    `İ`, `ı` and `ſ` are an `i` / `s` to an IGNORECASE pattern but str.lower() makes no lone `i` /
    `s` of them (the only such characters, checked over all of Unicode): on a line without them a
    word such a pattern needs is in line.lower(), and `in` tests there are 5x cheaper than an
    IGNORECASE search.
    """
    if "İ" in line or "ı" in line or "ſ" in line:
        return None
    return line.lower()


def _plain(line: str, prefilter: bool = True) -> Progress | None:
    # The prefilter: these patterns need `epoch` (_EPOCH_HEADER, _EPOCH_OF, _EPOCH_ALONE) or
    # `step`/`iter` (_STEP, _STEP_ALONE); many lines that come here hold neither (the `ter` of
    # `after`), and the `.*?` patterns cost 5-20 us each on a line.
    low = lowered(line) if prefilter else None
    epochs = low is None or "epoch" in low
    steps = low is None or "step" in low or "iter" in low
    head = _EPOCH_HEADER.match(line) if epochs else None
    if head is not None:
        return Progress(epoch=int(head[1]), epochs=int(head[2]) if head[2] else None, scope="header")
    stopped = _FIT_STOPPED.match(line) if "Trainer.fit" in line else None
    if stopped is not None:
        n = int(stopped[2])
        if stopped[1] == "steps":
            return Progress(percent=100.0, step=n, steps=n, scope="run")
        return Progress(percent=100.0, epoch=n - 1, epochs=n, scope="run")  # Lightning counts epochs from 0
    step = _STEP.match(line) if steps else None
    epoch = _EPOCH_OF.match(line) if epochs else None
    alone = _EPOCH_ALONE.match(line) if epoch is None and epochs else None
    if step is None and epoch is None and alone is None:
        single = _STEP_ALONE.match(line) if steps else None
        return Progress(step=int(single[1]), scope="run") if single is not None else None
    p = Progress(scope="run" if step is not None and epoch is None and alone is None else "inner")
    if step is not None:
        s, total = int(step[1]), int(step[2])
        p = replace(p, step=s, steps=total, percent=_pct(s, total))
    if epoch is not None:
        p = replace(p, epoch=int(epoch[1]), epochs=int(epoch[2]))
        inner = _INNER_PAREN.match(line, epoch.end()) if step is None else None
        if inner is not None:  # MockingBird `Epoch: 55/167 (996/1926)`: the epoch's own counter
            s, total = int(inner[1]), int(inner[2])
            return replace(p, step=s, steps=total, percent=_pct(s, total))
    elif alone is not None:
        p = replace(p, epoch=int(alone[1]))
    if step is None:
        p = replace(p, scope="summary")
    return p


# (keywords, form): the first form that finds counters on a line holding a keyword wins.
_COUNTER_FORMS: tuple[tuple[tuple[str, ...], Callable[[str], Progress | None]], ...] = (
    (("iteration",), _megatron),
    (("global_step/max_steps", "current_steps"), _trainer_json),
    (("global_step", "Epoch: ["), _paddle),
    (("Epoch", "Iter"), _mm),
    (("Step ",), _opennmt),
    (("epoch ",), _fairseq),
    (("Train: ",), _timm),
    (("poch", "POCH", "tep", "TEP", "ter", "TER"), _plain),
)
_COUNTER_WORDS = tuple(w for words, _ in _COUNTER_FORMS for w in words)
# Every keyword of the table in one scan (the table's, so a new row's are in it).
_ANY_COUNTER_WORD = re.compile("|".join(re.escape(w) for w in _COUNTER_WORDS))


def _plain_unfiltered(line: str) -> Progress | None:
    return _plain(line, prefilter=False)


_COUNTER_FORMS_UNFILTERED = tuple(
    (words, _plain_unfiltered if form is _plain else form) for words, form in _COUNTER_FORMS
)


def counters(line: str, prefilter: bool = True) -> Progress | None:
    """The run counters a line prints (no bar), or None. `scope` says what they count:
    `run` (step/steps of the run), `inner` (step/steps inside `epoch`), `zero` (as `inner`,
    epochs counted from 0), `header` (an epoch header alone), `summary` (an epoch's line with
    no inner counter). `prefilter=False`: the same without the shortcuts (tests)."""
    if _ANY_COUNTER_WORD.search(line) is None:
        return None
    for words, form in _COUNTER_FORMS if prefilter else _COUNTER_FORMS_UNFILTERED:
        if any(map(line.__contains__, words)):
            p = form(line)
            if p is not None:
                if p.global_step is None and p.scope != "run" and "lobal" in line:
                    g = _GLOBAL_STEP.search(line)
                    if g is not None:
                        p = replace(p, global_step=int(g[1]))
                if p.scope in ("run", "inner", "zero") or p.run_eta_seconds is not None:
                    p = replace(p, clock=line_clock(line))
                return p
    return None


def _desc_counters(desc: str) -> dict[str, object] | None:
    """What a bar's label (not a YOLO row) says of the epoch: Progress fields, or None."""
    m = _DESC_EPOCH_OF.match(desc)
    if m is not None:
        return {"epoch": int(m[1]), "epochs": int(m[2]), "scope": "inner"}
    m = _DESC_LIGHTNING.match(desc)
    if m is not None:
        return {"epoch": int(m[1]), "scope": "zero"}
    m = _DESC_FAIRSEQ.search(desc)
    if m is not None:
        return {"epoch": int(m[1]), "scope": "inner"}
    m = _DESC_EP.search(desc)
    if m is not None:
        return {"epoch": int(m[1]), "scope": "inner"}
    return None


# A bar keeps its label over thousands of states: each label is read once (YOLO rows, whose
# label holds the row's numbers, are not kept).
_DESC_SEEN: dict[str, dict[str, object] | None] = {}
_MAX_DESC_SEEN = 512
_UNSEEN: dict[str, object] = {}


def with_desc_counters(bar: Progress) -> Progress:
    """A tqdm bar with the epoch its label names: `Epoch 3/10`, Lightning's `Epoch 3` (from 0),
    fairseq's `epoch 001`, a YOLO row `3/100  2.58G ...` (scope `yolo`: core/trainlog/tables knows
    whether it counts from 0)."""
    desc = bar.desc
    if not desc:
        return bar
    if desc[-1] in "sp" and desc.endswith(_STEPS_LABELS):
        m = _DESC_STEPS.match(desc)
        if m is not None:
            return (
                replace(bar, epoch=int(m[1]), epochs=int(m[2]), scope="steps") if m[1] else replace(bar, scope="steps")
            )
    if not any(map(str.isdigit, desc)):
        return bar
    m = _DESC_YOLO.match(desc)
    if m is not None:
        return replace(bar, epoch=int(m[1]), epochs=int(m[2]), scope="yolo")
    changes = _DESC_SEEN.get(desc, _UNSEEN)  # one lookup: another thread may clear it
    if changes is _UNSEEN:
        changes = _desc_counters(desc)
        if len(_DESC_SEEN) >= _MAX_DESC_SEEN:
            _DESC_SEEN.clear()
        _DESC_SEEN[desc] = changes
    return bar if changes is None else replace(bar, **changes)


def epochs_hint(line: str, prefilter: bool = True) -> int | None:
    """How many epochs the run has, from a line that announces it, or None."""
    if "poch" not in line or prefilter and _EPOCHS_WORDS.search(line) is None:
        return None
    m = _EPOCHS_HINT.match(line)
    if m is None:
        return None
    n = _int(m[1] or m[2] or m[3])
    return n if n > 0 else None


def steps_hint(line: str, prefilter: bool = True) -> int | None:
    """How many steps the run has, from a line that announces it, or None."""
    if "steps" not in line and "iters" not in line or prefilter and _STEPS_WORDS.search(line) is None:
        return None
    m = _STEPS_HINT.match(line)
    if m is None:
        return None
    n = _int(m[1])
    return n if n > 0 else None
