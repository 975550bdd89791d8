"""What one training-log line says: a progress bar, loss and other metrics, a failure.

`parse_line` reads one display line (as LogStream produces them: no escapes, no `\\r`) and is
stateless; core/logsummary follows a whole log with it (and picks the training loss among
the metrics).

The forms recognised are those of docs/FIELD_NOTES.md, "Training logs", exercised by the
corpus under tests/data/logs/:

- tqdm `desc: 45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s, loss=0.523]`, without a
  total `450it [00:12, 36.10it/s]`, slow `1.23s/it`, times `MM:SS` / `H:MM:SS`, unknown `?`;
  Lightning's bar is a tqdm bar (`Epoch 1:   4%|▎ | 40/1095 [..., v_num=10, train_loss=0.500]`);
- HF Trainer dicts `{'loss': 1.6462, 'grad_norm': 17.5, 'learning_rate': 4.2e-05, 'epoch': 0.5}`,
  quoted numbers too, `eval_loss` dicts and the closing `train_runtime` dict;
- Keras `1875/1875 [====] - 5s 2ms/step - loss: 0.3437 - acc: 0.8957 - val_loss: 0.0759`;
- plain `loss: 0.12`, `loss=0.12`, `Loss 0.12`, `step 100 | loss 2.31`, `Val Loss: 0.6`;
- failures: CUDA out of memory in every PyTorch phrasing, `Killed` (host OOM killer), NaN/Inf
  losses, segmentation faults and aborts. Tracebacks span lines: core/logsummary follows them.

Look-alikes that do not count: `loss_scale: 65536` (not a loss), a path such as
`/data/loss=3.0/` or `train.py:42`, `no nan values found`, `INFO`, a warning or docstring that
mentions running out of memory or `torch.OutOfMemoryError` mid-sentence, an `inf` grad_norm
(fp16 overflow: the step is skipped).

Each kind of form has its table, tried in order, so a new form is one entry:

- `_PROGRESS_FORMS`: functions `line -> Progress | None`; the first bar found wins;
- `_METRIC_FORMS`: functions `(line, found)` adding `name -> value` pairs to `found`;
- `_FAILURE_FORMS`: (reason, keywords, pattern); the pattern is matched at the line's start
  only on lines holding one of the keywords, which keeps the lines that say nothing cheap.

Progress and metrics are only looked for on lines with a digit, `nan` or `inf`.

Known limits:

- `metrics` takes every `name: number` / `name=number` pair, so `seed: 42` or `device='cuda:0'`
  give `seed` and `cuda`; consumers pick the keys they know (train_loss / eval_loss do).
- A line that starts with a PyTorch OOM message verbatim (`RuntimeError: CUDA out of memory.`)
  counts as an OOM even when it is quoted, e.g. in a tutorial printed by the script.
- Progress is a tqdm or Keras bar's own; `step 100/1000` in free text is not progress, nor are
  rich / alive-progress bars. Lightning restarts its bar every epoch: its percent is the
  epoch's, not the run's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = [
    "OOM",
    "KILLED",
    "NAN_LOSS",
    "INF_LOSS",
    "SEGFAULT",
    "ABORTED",
    "Progress",
    "LineInfo",
    "parse_line",
    "parse_duration",
    "strip_rank",
    "is_loss_key",
    "is_eval_key",
]

OOM = "CUDA out of memory"
KILLED = "killed"
NAN_LOSS = "NaN loss"
INF_LOSS = "Inf loss"
SEGFAULT = "segmentation fault"
ABORTED = "aborted"

_MAX_LINE = 4096  # longer input is cut before parsing (LogStream's default cap)


@dataclass(frozen=True, slots=True)
class Progress:
    """A progress bar's state, as tqdm (and Lightning, HF) or Keras draw it.

    Any part the bar does not show is None (a tqdm bar without total has no percent).
    """

    percent: float | None = None
    """0-100: tqdm's `45%`, else step/total."""
    step: int | None = None
    """tqdm's `n` (`450/1000` -> 450); with unit scaling `1.50k` -> 1500."""
    total: int | None = None
    """tqdm's total; None for `450it [...]` and `450/?`."""
    elapsed_seconds: int | None = None
    """`[00:12<...` -> 12; Keras' `- 5s` on a finished epoch."""
    eta_seconds: int | None = None
    """`<00:15` -> 15; None for tqdm's `<?` (unknown yet); Keras' `ETA: 3s`."""
    rate: float | None = None
    """Items per second; tqdm's slow form `1.23s/it` is turned over (0.813...)."""
    rate_text: str | None = None
    """The rate as drawn: `36.10it/s`, `1.23s/it`, `?it/s`."""
    desc: str | None = None
    """The bar's label: `Epoch 1`, `Validation DataLoader 0`; None when it has none."""

    def as_json(self) -> dict[str, object]:
        """The `progress` object of `jobs --json` (CONTRACTS.md)."""
        return {"percent": self.percent, "eta_seconds": self.eta_seconds}


_NO_METRICS: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class LineInfo:
    """What one line says; empty for most lines."""

    progress: Progress | None = None
    """The bar drawn on this line, if any."""
    metrics: Mapping[str, float] = field(default_factory=lambda: _NO_METRICS)
    """`name -> value`, names lower-cased, spaces as `_` (`Val Loss` -> `val_loss`); read-only.
    `nan`, `inf` and `-inf` are floats here too."""
    failure: str | None = None
    """A failure this line alone proves: `CUDA out of memory`, `killed`, `NaN loss`, `Inf loss`,
    `segmentation fault`, `aborted`. Tracebacks span lines: see core/logsummary."""


_EMPTY = LineInfo()

# ----------------------------------------------------------------------------- line prefixes

_RANK = re.compile(r"\[(?:rank|default)(\d+)\]:[ ]?")  # torchrun / PyTorch >= 2.2 line prefixes


def strip_rank(line: str) -> tuple[str | None, str]:
    """(`N` of a leading `[rankN]:` / `[defaultN]:` prefix or None, the line without it)."""
    if line.startswith("["):
        m = _RANK.match(line)
        if m is not None:
            return m[1], line[m.end() :]
    return None, line


# ----------------------------------------------------------------------------- progress bars

# tqdm: [desc: ][pct%|bar|] n[/total][unit] [elapsed[<remaining], rate[, postfix]]. The status
# block is found first (it opens with a literal `[`), then what stands right before it.
_SCALED = r"\d+(?:\.\d+)?[kMGTPEZY]?"
_TIME = r"(?:\d+:)?\d+:\d\d"
_TQDM_STATUS = re.compile(r"\[(" + _TIME + r")(?:<(" + _TIME + r"|\?))?,\s*([^,\]]*+)[^\]]*+\]")
_TQDM_HEAD = re.compile(
    r"(?=\d)(?:(\d{1,3}(?:\.\d+)?)%\|[^|]*\|\s*)?"
    r"(" + _SCALED + r")(?:/(" + _SCALED + r"|\?))?[ ]?[A-Za-z]*[ ]?\Z"
)
_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*([kMGTPEZY]?)([A-Za-z]*)/([A-Za-z]+)")
_SCALE = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
          "Z": 10**21, "Y": 10**24}
# Keras: `  32/1875 [>....] - ETA: 3s - loss: ...`, `1875/1875 [====] - 5s 2ms/step - ...`,
# verbose=2 `1875/1875 - 5s - ...` and Keras 3's `━━━━` bar.
_KERAS = re.compile(
    r"\s*(\d+)/(\d+)\s+(?:\[[=>.]*\]|━+|-)\s*(?:-\s*)?(ETA: )?(\d+:\d\d(?::\d\d)?|\d+s)?"
)


def parse_duration(text: str) -> int | None:
    """tqdm/Keras times in seconds: `00:12`, `1:02:03`, `3s`; None for `?` or anything else."""
    text = text.strip()
    if text.endswith("s") and text[:-1].isdigit():
        return int(text[:-1])
    parts = text.split(":")
    if not 2 <= len(parts) <= 3 or not all(p.isdigit() and p.isascii() for p in parts):
        return None
    seconds = 0
    for p in parts:
        seconds = seconds * 60 + int(p)
    return seconds


def _scaled(text: str) -> int:
    if text[-1].isdigit():
        return int(float(text)) if "." in text else int(text)
    return int(round(float(text[:-1]) * _SCALE[text[-1]]))


def _rate(text: str) -> float | None:
    m = _RATE.search(text)
    if m is None:
        return None
    value = float(m[1]) * _SCALE[m[2]]
    if m[3] == "s" and m[4] != "s":  # tqdm's inverse form for slow loops: seconds per item
        return 1.0 / value if value else None
    return value if m[4] == "s" else None


def _tqdm(line: str) -> Progress | None:
    if "[" not in line or ":" not in line:
        return None
    status = _TQDM_STATUS.search(line)
    if status is None:
        return None
    m = _TQDM_HEAD.search(line, max(0, status.start() - 1000), status.start())
    if m is None:
        return None
    pct, n, total = m.groups()
    elapsed, eta, rate = status.groups()
    step = _scaled(n)
    tot = _scaled(total) if total and total != "?" else None
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
        total=tot,
        elapsed_seconds=parse_duration(elapsed),
        eta_seconds=parse_duration(eta) if eta else None,
        rate=_rate(rate),
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
        total=total or None,
        elapsed_seconds=None if running else seconds,
        eta_seconds=seconds if running else None,
    )


# A line draws one bar: the first form that finds one wins.
_PROGRESS_FORMS: tuple[Callable[[str], Progress | None], ...] = (_tqdm, _keras)

# ----------------------------------------------------------------------------- metrics

_NUM = r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan|inf(?:inity)?)"
# `12:30`, `10/100`, `1.2.3`, `info` are not numbers; `desc: 45%|` is tqdm's percentage
_NUM_END = r"(?![\w/]|[.:]\d|%\|)"
# `name: 1.5`, `name=1.5`, `'name': '1.5'`, `"name": 1.5`, `name: tensor(1.5, ...)`; an optional
# train/val/eval/test word before the name joins it (`Val Loss: 0.6` -> val_loss). The name may
# not follow a path character, so `/data/loss=3`, `run-loss: 2` and `train.py:42` are not metrics.
# Each pattern opens with a lookahead on the first character: sre then skips most positions
# without evaluating the lookbehind (5x faster on a tqdm bar).
_KV = re.compile(
    r"(?=['\"a-z_])(?<![\w./\\-])"
    r"(?:(train(?:ing)?|val(?:id(?:ation)?)?|eval(?:uation)?|test)\s+)?"
    r"['\"]?([a-z_](?:[\w/-]*\w)?)['\"]?"
    r"\s*[:=]\s*['\"]?(?:tensor\()?"
    r"(" + _NUM + r")" + _NUM_END,
    re.IGNORECASE,
)
# Well-known names printed with a space: `Loss 0.12`, `step 100 | loss 2.31`, `train loss 0.5`.
_KW = re.compile(
    r"(?=[aegilpstv])(?<![\w./\\-])"
    r"((?:(?:train(?:ing)?|val(?:id(?:ation)?)?|eval(?:uation)?|test)[ _])?loss"
    r"|acc(?:uracy)?|lr|learning[ _]rate|step|epoch|iter(?:ation)?|grad[ _]norm|ppl|perplexity)"
    r"\s+(" + _NUM + r")" + _NUM_END,
    re.IGNORECASE,
)
# A digit, or nan/inf as a word (not the `inf` of `INFO`).
_HAS_NUMBER = re.compile(r"\d|(?<![a-z])(?:nan|inf(?:inity)?)(?![a-z])", re.IGNORECASE)
_SKIP_KEYS = frozenset({"v_num"})  # Lightning's run version in every bar postfix
_QUALIFIED = re.compile(r"\s+")


def _separated_pairs(line: str, found: dict[str, float]) -> None:
    """`name: 1.5`, `name=1.5` and the quoted forms; of two with one name the later wins."""
    if ":" not in line and "=" not in line:
        return
    for qualifier, name, value in _KV.findall(line):
        key = (qualifier + "_" + name if qualifier else name).lower()
        if key not in _SKIP_KEYS:
            found[key] = float(value)


def _spaced_pairs(line: str, found: dict[str, float]) -> None:
    """`Loss 0.12` and the other well-known names: never over a value already found."""
    for name, value in _KW.findall(line):
        key = _QUALIFIED.sub("_", name.lower())
        if key not in found:
            found[key] = float(value)


_METRIC_FORMS: tuple[Callable[[str, dict[str, float]], None], ...] = (_separated_pairs, _spaced_pairs)


def _metrics(line: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for form in _METRIC_FORMS:
        form(line, found)
    return found


# ----------------------------------------------------------------------------- loss names


def _tokens(key: str) -> list[str]:
    return key.replace("/", "_").replace(".", "_").replace("-", "_").split("_")


def is_loss_key(key: str) -> bool:
    """`loss`, `train_loss`, `eval/loss`, `train_loss_step`...; not `loss_scale`."""
    if "loss" not in key:
        return False
    tokens = _tokens(key)
    return "loss" in tokens and "scale" not in tokens and "scaler" not in tokens


def is_eval_key(key: str) -> bool:
    """A metric measured on held-out data: `eval_`, `val_`, `valid_`, `validation_`, `test_`."""
    return _tokens(key)[0] in ("eval", "val", "valid", "validation", "test")


# ----------------------------------------------------------------------------- failures

# CUDA out of memory, every phrasing: PyTorch < 1.13 `RuntimeError: CUDA out of memory. Tried
# ...`, 1.13-2.4 `torch.cuda.OutOfMemoryError: CUDA out of memory. ...`, 2.5+
# `torch.OutOfMemoryError: ...`, the allocator-less `RuntimeError: CUDA error: out of memory`,
# cuBLAS failing to allocate its workspace, TensorFlow's ResourceExhaustedError on a GPU.
# Anchored at the start of the line (after a `[rankN]:` prefix) on an exception name, so prose
# that mentions running out of memory does not count.
_OOM = re.compile(
    r"\s*(?:[\w.]*(?:Error|Exception):\s*)?CUDA (?:out of memory\.|error: out of memory)"
    r"|\s*(?:[\w.]+\.)?OutOfMemoryError\b"
    r"|\s*[\w.]*(?:Error|Exception):.*CUBLAS_STATUS_ALLOC_FAILED"
    r"|\s*[\w.]*ResourceExhaustedError\b.*OOM when allocating.*GPU"
)
# The OOM killer's SIGKILL as the shell reports it: `Killed` alone, or bash's job line
# `/path/run.sh: line 5:  4242 Killed    python train.py`; torchrun's `exitcode: -9`.
_KILLED = re.compile(r"\s*Killed\s*$|\S.*: line \d+:\s+\d+ Killed\b|.*\(exitcode: -9\)")
_SEGFAULT = re.compile(
    r"\s*Segmentation fault(?: \(core dumped\))?\s*$|\S.*: line \d+:\s+\d+ Segmentation fault\b"
)
_ABORTED = re.compile(r"\s*Aborted(?: \(core dumped\))?\s*$|\S.*: line \d+:\s+\d+ Aborted\b")

# (reason, keywords, pattern): the first row whose pattern matches a line holding one of its
# keywords names the failure. Every pattern needs one of its keywords to match, so the
# substring tests only save regex runs, they never decide.
_FAILURE_FORMS: tuple[tuple[str, tuple[str, ...], re.Pattern[str]], ...] = (
    (OOM, ("emory", "ALLOC_FAILED", "OOM when"), _OOM),
    (KILLED, ("Killed", "exitcode: -9"), _KILLED),
    (SEGFAULT, ("Segmentation fault",), _SEGFAULT),
    (ABORTED, ("Aborted",), _ABORTED),
)


# One flat row per keyword: a third faster on the lines that say nothing than nested loops.
_FAILURE_WORDS = tuple((word, reason, pattern) for reason, words, pattern in _FAILURE_FORMS for word in words)


def _line_failure(body: str) -> str | None:
    for word, reason, pattern in _FAILURE_WORDS:
        if word in body and pattern.match(body):
            return reason
    return None


def _nonfinite_loss(metrics: Mapping[str, float]) -> str | None:
    for key, value in metrics.items():
        if not math.isfinite(value) and is_loss_key(key):
            return NAN_LOSS if math.isnan(value) else INF_LOSS
    return None


# ----------------------------------------------------------------------------- parse_line


def parse_line(line: str) -> LineInfo:
    """Progress, metrics and a single-line failure from one display line.

    Cheap on the lines that say nothing (most of a log): a line without a digit, `nan` or `inf`
    only runs the failure checks, which are plain substring tests unless a keyword is present.
    """
    if len(line) > _MAX_LINE:
        line = line[:_MAX_LINE]
    _, body = strip_rank(line)
    failure = _line_failure(body)
    if _HAS_NUMBER.search(body) is None:
        return _EMPTY if failure is None else LineInfo(failure=failure)
    progress = None
    for form in _PROGRESS_FORMS:
        progress = form(body)
        if progress is not None:
            break
    metrics = _metrics(body)
    if failure is None and metrics:
        failure = _nonfinite_loss(metrics)
    if progress is None and not metrics and failure is None:
        return _EMPTY
    return LineInfo(
        progress=progress,
        metrics=MappingProxyType(metrics) if metrics else _NO_METRICS,
        failure=failure,
    )
