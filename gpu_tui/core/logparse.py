"""What a training log says: progress, loss and other metrics, and why a job failed.

`parse_line` reads one display line (as LogStream produces them: no escapes, no `\\r`) and is
stateless; `LogSummary` follows a whole log in order and holds what the `jobs --json` output
and the log screen need (docs/CONTRACTS.md, "Other --json outputs"): the latest progress,
`last_loss`, a bounded loss curve and `failure`.

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
  losses, Python tracebacks (chained, and interleaved by `[rankN]:` prefixes).

Look-alikes that do not count: `loss_scale: 65536` (not a loss), a path such as
`/data/loss=3.0/` or `train.py:42`, `no nan values found`, `INFO`, a warning or docstring that
mentions running out of memory or `torch.OutOfMemoryError` mid-sentence, an `inf` grad_norm
(fp16 overflow: the step is skipped).

Known limits:

- `metrics` takes every `name: number` / `name=number` pair, so `seed: 42` or `device='cuda:0'`
  give `seed` and `cuda`; consumers pick the keys they know (train_loss / eval_loss do).
- A line that starts with a PyTorch OOM message verbatim (`RuntimeError: CUDA out of memory.`)
  counts as an OOM even when it is quoted, e.g. in a tutorial printed by the script.
- Progress is a tqdm or Keras bar's own; `step 100/1000` in free text is not progress, nor are
  rich / alive-progress bars. Lightning restarts its bar every epoch: its percent is the
  epoch's, not the run's.
- A traceback's end is its first non-indented line that looks like `Name: message`; another
  program's output interleaved there without a `[rankN]:` prefix could be taken for it.
- `last_loss` is NaN/inf when the last loss printed was (the failure says so too); callers
  writing JSON turn it into null.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from gpu_tui.core.logstream import StreamUpdate

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
    "is_loss_key",
    "is_eval_key",
    "train_loss",
    "eval_loss",
    "LogSummary",
]

OOM = "CUDA out of memory"
KILLED = "killed"
NAN_LOSS = "NaN loss"
INF_LOSS = "Inf loss"
SEGFAULT = "segmentation fault"
ABORTED = "aborted"

_MAX_LINE = 4096  # longer input is cut before parsing (LogStream's default cap)
_MAX_REASON = 120  # a failure is a short phrase, as in nvsmi


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
    `segmentation fault`, `aborted`. Tracebacks span lines: see LogSummary."""


_EMPTY = LineInfo()

# ----------------------------------------------------------------------------- regexes

_RANK = re.compile(r"\[(?:rank|default)(\d+)\]:[ ]?")  # torchrun / PyTorch >= 2.2 line prefixes

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

_TB_HEADER = "Traceback (most recent call last):"
_TB_CHAIN = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
# The last line of a traceback: `ValueError: bad shape`, `json.decoder.JSONDecodeError: ...`,
# `KeyboardInterrupt`.
_EXCEPTION = re.compile(r"((?:[A-Za-z_]\w*\.)*[A-Z]\w*)(?::(?:\s+(.*))?)?")
# Where a SyntaxError in the main script is reported (no `Traceback` header, no `, in func`).
_SYNTAX_AT = re.compile(r'  File "[^"]*", line \d+$')

# ----------------------------------------------------------------------------- helpers


def _short(text: str) -> str:
    return text if len(text) <= _MAX_REASON else text[: _MAX_REASON - 1] + "…"


def _strip_rank(line: str) -> tuple[str | None, str]:
    if line.startswith("["):
        m = _RANK.match(line)
        if m is not None:
            return m[1], line[m.end() :]
    return None, line


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


def _metrics(line: str) -> dict[str, float]:
    found: dict[str, float] = {}
    if ":" in line or "=" in line:
        for qualifier, name, value in _KV.findall(line):
            key = (qualifier + "_" + name if qualifier else name).lower()
            if key not in _SKIP_KEYS:
                found[key] = float(value)
    for name, value in _KW.findall(line):
        key = _QUALIFIED.sub("_", name.lower())
        if key not in found:
            found[key] = float(value)
    return found


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


_TRAIN_KEYS = ("loss", "train_loss", "train/loss", "training_loss", "train_loss_step", "loss_step")
_EVAL_KEYS = ("eval_loss", "val_loss", "eval/loss", "val/loss", "validation_loss", "valid_loss")


def train_loss(metrics: Mapping[str, float]) -> float | None:
    """The training loss among a line's metrics: `loss`, then `train_loss`, then any other
    loss-like name that is not an eval one; None when there is none.

    HF Trainer's closing `{'train_runtime': ..., 'train_loss': ...}` is the run's mean, not a
    step's loss: None.
    """
    if not metrics or "train_runtime" in metrics:
        return None
    for key in _TRAIN_KEYS:
        if key in metrics:
            return metrics[key]
    for key, value in metrics.items():
        if is_loss_key(key) and not is_eval_key(key):
            return value
    return None


def eval_loss(metrics: Mapping[str, float]) -> float | None:
    """The held-out loss among a line's metrics (`eval_loss`, `val_loss`, ...), else None."""
    if not metrics:
        return None
    for key in _EVAL_KEYS:
        if key in metrics:
            return metrics[key]
    for key, value in metrics.items():
        if is_loss_key(key) and is_eval_key(key):
            return value
    return None


def _line_failure(body: str) -> str | None:
    if ("emory" in body or "ALLOC_FAILED" in body or "OOM when" in body) and _OOM.match(body):
        return OOM
    if "Killed" in body or "exitcode: -9" in body:
        if _KILLED.match(body):
            return KILLED
    if "Segmentation fault" in body and _SEGFAULT.match(body):
        return SEGFAULT
    if "Aborted" in body and _ABORTED.match(body):
        return ABORTED
    return None


def _nonfinite_loss(metrics: Mapping[str, float]) -> str | None:
    for key, value in metrics.items():
        if not math.isfinite(value) and is_loss_key(key):
            return NAN_LOSS if math.isnan(value) else INF_LOSS
    return None


def parse_line(line: str) -> LineInfo:
    """Progress, metrics and a single-line failure from one display line.

    Cheap on the lines that say nothing (most of a log): a line without a digit, `nan` or `inf`
    only runs the failure checks, which are plain substring tests unless a keyword is present.
    """
    if len(line) > _MAX_LINE:
        line = line[:_MAX_LINE]
    _, body = _strip_rank(line)
    failure = _line_failure(body)
    if _HAS_NUMBER.search(body) is None:
        return _EMPTY if failure is None else LineInfo(failure=failure)
    progress = None
    if "[" in body:
        progress = _tqdm(body) if ":" in body else None
        if progress is None and "/" in body:
            progress = _keras(body)
    elif "━" in body or " - " in body:
        progress = _keras(body)
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


# ----------------------------------------------------------------------------- LogSummary


class _Series:
    """At most `max_points` (index, value) points spread over the whole run.

    Every observation gets the next index. When the buffer is full every other point is
    dropped and from then on only every 2nd (4th, 8th...) observation is kept, so the curve
    always spans the run from its start at a resolution that halves as it grows. The newest
    value may therefore be missing; `last` always has it.
    """

    __slots__ = ("max_points", "points", "count", "stride", "last")

    def __init__(self, max_points: int) -> None:
        self.max_points = max_points
        self.points: list[tuple[int, float]] = []
        self.count = 0
        self.stride = 1
        self.last: float | None = None

    def add(self, value: float) -> None:
        index = self.count
        self.count += 1
        self.last = value
        if index % self.stride:
            return
        self.points.append((index, value))
        if len(self.points) > self.max_points:
            self.points = self.points[::2]
            self.stride *= 2


class _Trace:
    """Where one writer (one `[rankN]:` prefix, or none) is in a traceback."""

    __slots__ = ("state", "chain", "specific")

    IDLE, FRAMES, SYNTAX, AFTER, LINKED = range(5)

    def __init__(self) -> None:
        self.state = _Trace.IDLE
        self.chain = 0  # id of the chain this writer's current traceback belongs to
        self.specific = False  # a specific failure (OOM...) was seen inside the chain


_MAX_WRITERS = 256  # ranks followed at once; later ones share the unprefixed state
_MAX_METRIC_KEYS = 128


class LogSummary:
    """Follows one job's log, line by line in order, and says what it amounts to.

    Feed it LogStream output with `consume(update)`, or lines with `add_line` (completed
    lines; `final=False` for superseded progress states) and `set_live` (the rows still
    changing, for the current progress and loss).

    - `progress`: the newest bar state; among live rows the topmost bar wins (the overall bar
      over a nested eval/inner bar).
    - `last_loss`: the newest training loss (`loss`, `train_loss`, ...; eval losses are
      `last_eval_loss`), live bars included.
    - `loss_points` / `eval_points`: bounded curves (see _Series); non-finite values are left
      out of them (they are failures instead). Consecutive bar states repeating the same step
      and loss add one point.
    - `failure`: a specific failure (CUDA out of memory, killed, NaN/Inf loss, segmentation
      fault, aborted) wins, the first one seen; else the first traceback's exception as
      `Traceback: Name: message`, where a chained traceback ("During handling of the above
      exception...") reports its last exception, as Python's own last line does, and an OOM
      inside the chain reports `CUDA out of memory`. Tracebacks are followed per `[rankN]:`
      prefix, so interleaved ranks do not mix.
    - `finish(exit_code)`: the job's final `failure` (CONTRACTS.md).
    """

    def __init__(self, max_points: int = 2000) -> None:
        if max_points < 2:
            raise ValueError("max_points must be >= 2")
        self.progress: Progress | None = None
        self.last_loss: float | None = None
        self.last_eval_loss: float | None = None
        self.metrics: dict[str, float] = {}
        """Latest value of every metric name seen (at most 128 names)."""
        self.lines_seen = 0
        """Lines given to `add_line` (superseded bar states included)."""
        self._losses = _Series(max_points)
        self._evals = _Series(max_points)
        self._last_bar_point: tuple[int | None, float | None] | None = None
        self._specific: str | None = None
        self._nonfinite: str | None = None
        self._traceback: str | None = None
        self._traceback_chain: int | None = None
        self._traces: dict[str | None, _Trace] = {}
        self._chains = 0

    # ------------------------------------------------------------------ results

    @property
    def failure(self) -> str | None:
        """What the log shows went wrong so far, or None (see the class docstring)."""
        return self._specific or self._traceback

    @property
    def loss_points(self) -> list[tuple[int, float]]:
        """The training loss curve as (observation index, value), oldest first."""
        return list(self._losses.points)

    @property
    def eval_points(self) -> list[tuple[int, float]]:
        """The eval/val loss curve as (observation index, value), oldest first."""
        return list(self._evals.points)

    def finish(self, exit_code: int | None, killed_by_signal: bool = False) -> str | None:
        """The job's `failure` once it ended (CONTRACTS.md, `jobs --json`).

        A reason found in the log wins over `exit code N`. Exit 0 keeps only a NaN/Inf loss
        (the run "succeeded" on garbage); a traceback or OOM it printed and survived is not a
        failure. Nothing in the log: exit 137 (128 + SIGKILL), -9 or `killed_by_signal` ->
        `killed`, another non-zero code -> `exit code N`, None (unknown) -> None.
        """
        if exit_code == 0 and not killed_by_signal:
            return self._nonfinite
        found = self.failure
        if found is not None:
            return found
        if killed_by_signal or exit_code in (137, -9):
            return KILLED
        if exit_code is None:
            return None
        return f"exit code {exit_code}"

    # ------------------------------------------------------------------ input

    def consume(self, update: StreamUpdate) -> None:
        """One LogStream update: its events in order, then its live rows."""
        for event in update.events:
            self.add_line(event.text, final=event.final)
        self.set_live(update.live)

    def add_line(self, line: str, *, final: bool = True) -> LineInfo:
        """One line, in log order. `final=False`: a bar state a newer one replaced (no
        traceback tracking, it cannot be part of one). Returns what the line said."""
        self.lines_seen += 1
        info = parse_line(line)
        if info.progress is not None:
            self.progress = info.progress
        if info.metrics:
            self._take_metrics(info, series=True)
        specific = info.failure
        if specific is not None:
            if self._specific is None:
                self._specific = specific
            if self._nonfinite is None and specific in (NAN_LOSS, INF_LOSS):
                self._nonfinite = specific
        if final:
            self._follow_traceback(line, specific)
        return info

    def set_live(self, lines: Iterable[str]) -> None:
        """The rows still being redrawn: they set `progress` and `last_loss`, nothing else
        (they are partial or will come again as events)."""
        bar: Progress | None = None
        for line in lines:
            info = parse_line(line)
            if info.progress is not None and bar is None:
                bar = info.progress
            if info.metrics:
                self._take_metrics(info, series=False)
        if bar is not None:
            self.progress = bar

    # ------------------------------------------------------------------ internals

    def _take_metrics(self, info: LineInfo, series: bool) -> None:
        metrics = info.metrics
        store = self.metrics
        for key, value in metrics.items():
            if key in store or len(store) < _MAX_METRIC_KEYS:
                store[key] = value
        loss = train_loss(metrics)
        if loss is None and self.last_loss is None and "train_runtime" in metrics:
            self.last_loss = metrics.get("train_loss")  # the run's mean: better than nothing
        if loss is not None:
            self.last_loss = loss
        ev = eval_loss(metrics)
        if ev is not None:
            self.last_eval_loss = ev
        if not series:
            return
        bar = info.progress
        if bar is not None:  # a bar redraws the same step and postfix many times: one point
            point = (bar.step, loss)
            if point == self._last_bar_point:
                return
            self._last_bar_point = point
        if loss is not None and math.isfinite(loss):
            self._losses.add(loss)
        # A bar's postfix repeats the last validation loss for a whole epoch: one point.
        if ev is not None and math.isfinite(ev):
            if bar is None or ev != self._evals.last:
                self._evals.add(ev)

    def _trace(self, writer: str | None) -> _Trace:
        trace = self._traces.get(writer)
        if trace is None:
            if len(self._traces) >= _MAX_WRITERS:
                writer = None
                trace = self._traces.get(None)
            if trace is None:
                trace = self._traces[writer] = _Trace()
        return trace

    def _follow_traceback(self, line: str, specific: str | None) -> None:
        writer, body = _strip_rank(line)
        trace = self._traces.get(writer)
        if trace is None:
            # Only start following a writer at a traceback's first line.
            starts = body.endswith(_TB_HEADER) or (
                body.startswith("  File") and _SYNTAX_AT.match(body) is not None
            )
            if not starts:
                return
            trace = self._trace(writer)
        state = trace.state
        if body.endswith(_TB_HEADER):  # also when glued after a bar or a logging prefix
            if state != _Trace.LINKED:
                self._chains += 1
                trace.chain = self._chains
                trace.specific = False
            trace.state = _Trace.FRAMES
            return
        if state == _Trace.FRAMES or state == _Trace.SYNTAX:
            if not body or body[0].isspace():
                return  # frames, source lines, carets
            m = _EXCEPTION.fullmatch(body)
            if m is None:
                if state == _Trace.SYNTAX:
                    trace.state = _Trace.IDLE
                return  # someone else's output interleaved: keep waiting
            if state == _Trace.SYNTAX:
                self._chains += 1
                trace.chain = self._chains
                trace.specific = False
            trace.state = _Trace.AFTER
            if specific is not None:
                trace.specific = True
            if trace.specific:
                return  # the OOM (etc.) is the failure, already recorded
            name = m[1].rsplit(".", 1)[-1]
            reason = _short(f"Traceback: {name}: {m[2]}" if m[2] else f"Traceback: {name}")
            if self._traceback is None or self._traceback_chain == trace.chain:
                self._traceback = reason
                self._traceback_chain = trace.chain
            return
        if state == _Trace.AFTER:
            if body in _TB_CHAIN:
                trace.state = _Trace.LINKED
            elif specific is not None:
                trace.specific = True
            return
        if state == _Trace.LINKED:
            if body.strip():
                trace.state = _Trace.AFTER
            return
        if state == _Trace.IDLE and body.startswith("  File") and _SYNTAX_AT.match(body):
            trace.state = _Trace.SYNTAX
