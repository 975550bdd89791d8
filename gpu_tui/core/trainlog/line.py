"""What one training-log line says: a progress bar, loss and other metrics, a failure.

`parse_line` reads one display line (as LogStream produces them: no escapes, no `\\r`) and is
stateless; core/trainlog/summary follows a whole log with it (and picks the training loss among
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
- Ultralytics 8.4's own bar `1/100  6.21G  3.795 ...  512: 0% ──────────── 3/6848 2.0it/s 2.3s<58:08`;
- mmcv / mmengine's ProgressBar `[>>>>>   ] 3217/3849, 4.0 task/s, elapsed: 799s, ETA:   157s`;
- run counters (Keras `Epoch 17/100`, Megatron `iteration 120/ 5000`, mmdet, Paddle, OpenNMT,
  fairseq, timm, YOLO rows): core/trainlog/counters;
- failures (core/trainlog/failures): CUDA out of memory in every PyTorch phrasing, killed in any locale,
  NCCL, device-side asserts, a full disk, NaN/Inf losses, segfaults and aborts. Tracebacks span
  lines: core/trainlog/summary follows them.

Look-alikes that do not count: `loss_scale: 65536` (not a loss), a path such as
`/data/loss=3.0/` or `train.py:42`, `no nan values found`, `INFO`, a warning or docstring that
mentions running out of memory or `torch.OutOfMemoryError` mid-sentence, an `inf` grad_norm
(fp16 overflow: the step is skipped).

Each kind of form has its table, tried in order, so a new form is one entry:

- `_PROGRESS_FORMS`: functions `line -> Progress | None`; the first bar found wins;
- `_METRIC_FORMS`: functions `(line, found)` adding `name -> value` pairs to `found`;
- `_FAILURE_FORMS` (core/trainlog/failures): (keywords, recogniser), run only on lines holding a keyword;
- `_COUNTER_FORMS` (core/trainlog/counters): the same, for run counters.

Progress and metrics are only looked for on lines with a digit, `nan` or `inf`.

Known limits:

- `metrics` takes every `name: number` / `name=number` pair, so `seed: 42` or `device='cuda:0'`
  give `seed` and `cuda`; consumers pick the keys they know (train_loss / eval_loss do).
- A line that starts with a PyTorch OOM message verbatim (`RuntimeError: CUDA out of memory.`)
  counts as an OOM even when it is quoted, e.g. in a tutorial printed by the script.
- rich / alive-progress bars are not progress. A line's Progress is the line's own (a bar, or
  the counters core/trainlog/counters reads); the run's is core/trainlog/progress's.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from functools import lru_cache
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple, overload

from gpu_tui.core.trainlog.bars import PROGRESS_FORMS, PROGRESS_FORMS_UNFILTERED
from gpu_tui.core.trainlog.counters import counters, lowered, parse_duration, with_desc_counters
from gpu_tui.core.trainlog.failures import (
    ABORTED,
    INF_LOSS,
    KILLED,
    NAN_LOSS,
    OOM,
    SEGFAULT,
    has_failure_word,
    line_failure_unfiltered,
    nonfinite_loss,
)
from gpu_tui.core.trainlog.model import EMPTY, NO_METRICS, LineInfo, Progress, replace
from gpu_tui.core.trainlog.tables import header_columns

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
    "LineParser",
    "parse_duration",
    "strip_rank",
    "is_loss_key",
    "is_eval_key",
]

_MAX_LINE = 4096  # longer input is cut before parsing (LogStream's default cap)
_CONFIG_DUMPS = ("Namespace(", "hyperparameters:", "engine/trainer:", "Config:", "config:")

# ----------------------------------------------------------------------------- line prefixes

_RANK = re.compile(r"\[(?:rank|default)(\d+)\]:[ ]?")  # torchrun / PyTorch >= 2.2 line prefixes
# A log viewer's (or `cat -n`-like) line number: `[231844] ValueError: ...`, `[80746] [rank0]:...`.
_LINE_NO = re.compile(r"\[\d+\] ")


def strip_rank(line: str) -> tuple[str | None, str]:
    """(`N` of a leading `[rankN]:` / `[defaultN]:` prefix or None, the line without it and
    without a line number `[231844] ` before it)."""
    if line.startswith("["):
        if line[1:2].isdigit():
            n = _LINE_NO.match(line)
            if n is not None:
                line = line[n.end() :]
                if not line.startswith("["):
                    return None, line
        m = _RANK.match(line)
        if m is not None:
            return m[1], line[m.end() :]
    return None, line


# ----------------------------------------------------------------------------- metrics

_NUM = r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|nan|inf(?:inity)?)"
# `12:30`, `10/100`, `1.2.3`, `info` are not numbers; `desc: 45%|` is tqdm's percentage
_NUM_END = r"(?![\w/]|[.:]\d|%\|)"
# `name: 1.5`, `name=1.5`, `'name': '1.5'`, `"name": 1.5`, `name: tensor(1.5, ...)`; an optional
# train/val/eval/test word before the name joins it (`Val Loss: 0.6` -> val_loss). The name may
# not follow a path character, so `/data/loss=3`, `run-loss: 2` and `train.py:42` are not metrics.
# Each pattern opens with a lookahead on the first character: sre then skips most positions
# without evaluating the lookbehind (5x faster on a tqdm bar).
_QUALIFIER = r"(?:train(?:ing)?|val(?:id(?:ation)?)?|eval(?:uation)?|test|batch|avg|average|mean|total|running|lm)"
_KV = re.compile(
    r"(?=['\"a-z_])(?<![\w./\\-])"
    r"((?:" + _QUALIFIER + r"\s+){1,2})?"
    # the name runs to the end of its [\w/-] run (what follows it never is one): possessive, so a
    # word without `:`/`=` after it is tried once, not once per length
    # OpenMMLab's head-qualified `decode.loss_ce`, `s0.acc`; ms-swift's unit-suffixed `'memory(GiB)'`
    r"['\"]?([a-z]\w*\.(?:loss|acc)\w*|[a-z_](?:[\w/-]*+(?<=\w))?(?:\((?:GiB|MiB|GB|MB|s/it|it/s|iter/s)\))?)['\"]?"
    r"\s*[:=]\s*['\"]?(?:tensor\()?"
    r"(" + _NUM + r")" + _NUM_END,
    re.IGNORECASE,
)
# Well-known names printed with a space: `Loss 0.12`, `step 100 | loss 2.31`, `train loss 0.5`,
# the torchvision/torchelastic ImageNet script's top-k `Acc@1  12.50 (  8.52)` -> acc@1.
_KW = re.compile(
    r"(?=[aegilpstv])(?<![\w./\\-])"
    r"((?:(?:train(?:ing)?|val(?:id(?:ation)?)?|eval(?:uation)?|test)[ _])?loss"
    r"|acc(?:uracy)?(?:@\d+)?|lr|learning[ _]rate|step|epoch|iter(?:ation)?|grad[ _]norm|ppl|perplexity)"
    r"\s+(" + _NUM + r")" + _NUM_END,
    re.IGNORECASE,
)
# A digit, or nan/inf as a word (not the `inf` of `INFO`).
_HAS_NUMBER = re.compile(r"\d|(?<![a-z])(?:nan|inf(?:inity)?)(?![a-z])", re.IGNORECASE)
# Its first branch alone: sre scans for a digit in C, 3x faster than trying both branches at
# every position; most lines have a digit, and only the others need _HAS_NUMBER.
_DIGIT = re.compile(r"\d")
_SKIP_KEYS = frozenset({"v_num"})  # Lightning's run version in every bar postfix
_QUALIFIED = re.compile(r"\s+")


_SHORT_QUALIFIER = {"training": "train", "validation": "val", "valid": "val", "evaluation": "eval"}
# Megatron / fairseq `| lm loss: 2.304512E+00 | loss scale: 1.0 | elapsed time per iteration (ms): 356.2 |`,
# `| loss 6.326 | valid_ppl 37.61 |`: one pair per `|` segment, names with spaces.
_PIPE_PAIR = re.compile(
    r"\s*(?:number of )?([A-Za-z][A-Za-z_ ./-]*?)(?: \((\w+)\))?(?:\s*:\s*|\s+)(" + _NUM + r")\s*", re.IGNORECASE
)
# MetricLogger (DeiT, DETR, timm) `loss: 4.4029 (4.3245)`: the value, then the running mean.
_WITH_AVG = re.compile(r"(?<![\w./-])([a-z_]\w*): (" + _NUM + r") \((" + _NUM + r")\)", re.IGNORECASE)


# `0.93 steps/s`, `5432 tok/s` -> steps_per_s, tok_per_s (tqdm's own rate is the bar's, not a metric)
_RATE_METRIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?) ([a-z]+)/s\b")


def _rates(line: str, found: dict[str, float]) -> bool:
    if "/s" not in line or "it/s" in line:
        return False
    pairs = _RATE_METRIC.findall(line)
    for value, unit in pairs:
        found.setdefault(unit + "_per_s", float(value))
    return bool(pairs)


def _pipe_pairs(line: str, found: dict[str, float]) -> bool:
    """One `name: value` / `name value` per `|`-separated segment (Megatron, fairseq)."""
    if line.count("|") < 3 or "%|" in line:
        return False
    matched = False
    for segment in line.split("|"):
        m = _PIPE_PAIR.fullmatch(segment)
        if m is None:
            continue
        words = m[1].lower().split()
        if m[2]:  # `elapsed time per iteration (ms)` -> elapsed_ms_per_iteration
            unit = m[2].lower()
            words = [unit if w == "time" else w for w in words] if "time" in words else [*words, unit]
        found["_".join(words)] = float(m[3])
        matched = True
    return matched


def _separated_pairs(line: str, found: dict[str, float]) -> bool:
    """`name: 1.5`, `name=1.5` and the quoted forms; of two with one name the later wins."""
    if ":" not in line and "=" not in line:
        return False
    pairs = _KV.findall(line)
    for qualifier, name, value in pairs:
        if qualifier:
            words = [_SHORT_QUALIFIER.get(w.lower(), w) for w in qualifier.split()]
            key = ("_".join(words) + "_" + name).lower()
        else:
            key = name.lower()
        if key not in _SKIP_KEYS:
            found[key] = float(value)
    if " (" in line:
        means = _WITH_AVG.findall(line)
        for name, _, mean in means:
            found[name.lower() + "_avg"] = float(mean)
        return bool(pairs or means)
    return bool(pairs)


# A word each branch of _KW needs (three in four lines with a number hold none).
_KW_WORDS = ("loss", "acc", "lr", "learning", "step", "epoch", "iter", "grad", "ppl", "perplexity")


def _spaced_pairs(line: str, found: dict[str, float]) -> bool:
    low = lowered(line)
    if low is not None and not any(map(low.__contains__, _KW_WORDS)):
        return False
    return _spaced_pairs_unfiltered(line, found)


def _spaced_pairs_unfiltered(line: str, found: dict[str, float]) -> bool:
    """`Loss 0.12` and the other well-known names: never over a value already found."""
    pairs = _KW.findall(line)
    for name, value in pairs:
        key = _QUALIFIED.sub("_", name.lower())
        if key not in found:
            found[key] = float(value)
    return bool(pairs)


# `Validation BLEU: BLEU-1 73.98, BLEU-2 68.28, BLEU-3 48.80, BLEU-4 33.42`: numbered values of one
# measure under a label -> val_bleu1 ... val_bleu4 (ROUGE-1/2/L lists the same way).
_LABELLED_LIST = re.compile(r"(?:^|(?<=[\s-]))([A-Za-z]+) ([A-Za-z]+): (?=\2-\w+ \d)")
_LIST_ITEM = re.compile(r"([A-Za-z]+)-(\w+) (" + _NUM + r")")


def _labelled_list(line: str, found: dict[str, float]) -> bool:
    # no digit in the test: a line's shape decides which forms run (LineParser)
    if ": " not in line or "-" not in line:
        return False
    m = _LABELLED_LIST.search(line)
    if m is None:
        return False
    label = _SHORT_QUALIFIER.get(m[1].lower(), m[1].lower())
    measure = m[2].lower()
    for name, index, value in _LIST_ITEM.findall(line, m.end()):
        if name.lower() == measure:
            found[f"{label}_{measure}{index.lower()}"] = float(value)
    return True


if TYPE_CHECKING:  # not at run time: an instance's python3 < 3.9 cannot subscript dict
    # adds the pairs it finds to the dict; True where its pattern matched the line
    _MetricForm = Callable[[str, dict[str, float]], bool]
_METRIC_FORMS: tuple[_MetricForm, ...] = (
    _pipe_pairs,
    _separated_pairs,
    _spaced_pairs,
    _rates,
    _labelled_list,
)


_METRIC_FORMS_UNFILTERED = tuple(_spaced_pairs_unfiltered if f is _spaced_pairs else f for f in _METRIC_FORMS)


# ----------------------------------------------------------------------------- loss names


def _tokens(key: str) -> list[str]:
    return key.replace("/", "_").replace(".", "_").replace("-", "_").split("_")


# A log prints the same few names on every line: each name is classified once.
@lru_cache(maxsize=1024)
def is_loss_key(key: str) -> bool:
    """`loss`, `train_loss`, `eval/loss`, `train_loss_step`...; not `loss_scale`."""
    if "loss" not in key:
        return False
    tokens = _tokens(key)
    return "loss" in tokens and "scale" not in tokens and "scaler" not in tokens


@lru_cache(maxsize=1024)
def is_eval_key(key: str) -> bool:
    """A metric measured on held-out data: `eval_`, `val_`, `valid_`, `validation_`, `test_`."""
    return _tokens(key)[0] in ("eval", "val", "valid", "validation", "test")


# ----------------------------------------------------------------------------- parse_line

# An exception's own line (`ValueError: ...`, `numpy.core._exceptions.MemoryError: ...`): its words are not counters.
_EVAL_LABELS = ("Test:", "Eval:", "Val:", "Valid:", "Validation:")  # a line of the evaluation loop
_EXCEPTION_LINE = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning): ")


class _Plan(NamedTuple):
    """Which recognisers found something on a line: LineParser runs only those on a line of the
    same shape."""

    words: bool
    """The line holds a failure's keyword (core/trainlog/failures.has_failure_word)."""
    number: bool
    """The line holds a digit, `nan` or `inf`."""
    progress: Callable[[str], Progress | None] | None
    """The progress form that found the bar."""
    tail: int
    """Where no bar: _COUNTERS (core/trainlog/counters found run counters), _HEADER (none; the
    line may be a table's header), _EXCEPTION (an exception's own line: neither)."""
    metrics: tuple[_MetricForm, ...]
    """The metric forms that matched (on any line of the shape), in _METRIC_FORMS' order."""
    info: LineInfo | None = None
    """The answer for every line of the shape, where it cannot depend on the line's digits: the
    line has no ASCII digit (its shape is the line), or it said nothing and holds no failure
    keyword (no recogniser runs on its shape then either). A third of a log's lines: they cost a
    lookup."""


_BAR, _COUNTERS, _HEADER, _EXCEPTION = range(4)
_NO_NUMBER = (_Plan(False, False, None, _HEADER, ()), _Plan(True, False, None, _HEADER, ()))


def parse_line(line: str, *, prefilter: bool = True) -> LineInfo:
    """Progress, metrics and a single-line failure from one display line.

    Cheap on the lines that say nothing (most of a log): a line without a digit, `nan` or `inf`
    only runs the failure checks, one scan for all their keywords (core/trainlog/failures).
    `prefilter=False`: the same answer without the shortcuts that skip recognisers which cannot
    match (tests hold the two to each other on the real corpus).
    """
    if len(line) > _MAX_LINE:
        line = line[:_MAX_LINE]
    return _parse(line, prefilter, None)[0]


# Every ASCII digit as `0`: a line's shape. The recognisers' patterns and prefilters name no digit
# other than by `\d`, so two lines of one shape match the same patterns at the same places: a
# training log prints a few shapes millions of times. (Failure rows do name digits, but their
# keywords hold none: the rows run in full on every line that holds a keyword.) On bytes:
# str.translate is 14x slower on a line that is not ASCII (every bar).
_SHAPE = bytes.maketrans(b"123456789", b"000000000")
# One real log prints at most a few hundred shapes (the corpus's 136 logs: 2,682 together).
_MAX_SHAPES = 4096
_MAX_SHAPE_BYTES = 1024
"""Longer lines are read whole each time (their plans would hold megabytes per log followed)."""


class LineParser:
    """`parse_line` for one log, with what each line shape needed remembered: a line of a shape
    seen before runs only the recognisers that found something on it (most of a line's cost is in
    the ones that find nothing). The same answers as parse_line (tests hold the two to each other
    on the real corpus and on its lines with other digits)."""

    __slots__ = ("_plans", "hits")

    def __init__(self) -> None:
        self._plans: dict[bytes, _Plan] = {}
        self.hits = 0

    def __reduce__(self) -> tuple[type[LineParser], tuple[()]]:
        # a saved reader (core/trainlog/series) keeps no plans: they are a cache, rebuilt in a
        # few lines, and would add a few hundred KB to every save
        return LineParser, ()

    def parse(self, line: str) -> LineInfo:
        if len(line) > _MAX_LINE:
            line = line[:_MAX_LINE]
        encoded = line.encode("utf-8", "surrogatepass")
        if len(encoded) > _MAX_SHAPE_BYTES:
            return _parse(line, True, None)[0]
        shape = encoded.translate(_SHAPE)
        plan = self._plans.get(shape)
        if plan is not None:
            if plan.info is not None:
                self.hits += 1
                return plan.info
            found = _parse(line, True, plan)
            if found is not None:
                self.hits += 1
                return found[0]
        # a new shape, or one whose bar or counters were not found this time: every recogniser
        info, found_plan = _parse(line, True, None)
        if plan is None and ((info is EMPTY and not found_plan.words) or b"0" not in shape):
            found_plan = found_plan._replace(info=info)
        elif plan is not None and plan.metrics != found_plan.metrics:
            # a metric form that matched a line of this shape is never dropped from its plan
            kept = set(plan.metrics + found_plan.metrics)
            found_plan = found_plan._replace(metrics=tuple(f for f in _METRIC_FORMS if f in kept))
        plans = self._plans
        if len(plans) >= _MAX_SHAPES:
            plans.clear()  # a log of ever new shapes (numbered names): start again
        plans[shape] = found_plan
        return info


@overload
def _parse(line: str, prefilter: bool, plan: None) -> tuple[LineInfo, _Plan]: ...
@overload
def _parse(line: str, prefilter: bool, plan: _Plan) -> tuple[LineInfo, _Plan] | None: ...
def _parse(line: str, prefilter: bool, plan: _Plan | None) -> tuple[LineInfo, _Plan] | None:
    """parse_line's answer and its plan. With `plan`: only the recognisers it names, and None
    where its bar or counters form finds nothing (the caller parses the line whole)."""
    _, body = strip_rank(line)
    if plan is not None:
        words = plan.words
    else:
        words = has_failure_word(body) if prefilter else True
    failure = line_failure_unfiltered(body) if words else None
    if body.startswith(_CONFIG_DUMPS) or '"log_history": [' in body:
        # argparse / hyperparameter dumps, a trainer_state.json's whole history: not the latest values
        return (EMPTY if failure is None else LineInfo(failure=failure)), _NO_NUMBER[words]
    if plan is None:
        number = _DIGIT.search(body) is not None or _HAS_NUMBER.search(body) is not None
    else:
        number = plan.number
    if not number:
        columns = header_columns(body)
        if columns is not None:
            return LineInfo(failure=failure, columns=columns), _NO_NUMBER[words]
        return (EMPTY if failure is None else LineInfo(failure=failure)), _NO_NUMBER[words]
    progress = None
    bar_form = None
    if plan is None:
        for form in PROGRESS_FORMS if prefilter else PROGRESS_FORMS_UNFILTERED:
            progress = form(body)
            if progress is not None:
                bar_form = form
                break
    elif plan.progress is not None:
        bar_form = plan.progress
        progress = bar_form(body)
        if progress is None:
            return None
    columns = None
    tail = _BAR
    if progress is not None:
        progress = with_desc_counters(progress)
        if progress.desc is not None and progress.scope == "bar":
            columns = header_columns(progress.desc)
    elif plan is not None:
        tail = plan.tail
        if tail == _COUNTERS:
            progress = counters(body, prefilter)
            if progress is None:
                return None
        elif tail == _HEADER:
            columns = header_columns(body)
    elif _EXCEPTION_LINE.match(body) is not None:  # `ValueError: Tried to step 100002 times` counts nothing
        tail = _EXCEPTION
    else:
        progress = counters(body, prefilter)
        if progress is None:
            tail = _HEADER
            columns = header_columns(body)
        else:
            tail = _COUNTERS
    metrics: dict[str, float] = {}
    matched: list[_MetricForm] = []
    if progress is None or progress.scope != "yolo":
        if plan is None:
            for pairs in _METRIC_FORMS if prefilter else _METRIC_FORMS_UNFILTERED:
                if pairs(body, metrics):
                    matched.append(pairs)
        else:
            for pairs in plan.metrics:
                pairs(body, metrics)
    if "loss" in metrics and body.startswith(_EVAL_LABELS):
        # timm / DeiT validation `Test: [  29/29]  ...  Loss:  0.1036 (0.1876)`: a held-out loss
        metrics[body[: body.index(":")].lower() + "_loss"] = metrics.pop("loss")
    if "global_step" in metrics and math.isfinite(metrics["global_step"]):
        if progress is None:  # PaddleNLP's trainer dicts `{'loss': 0.12, ..., 'global_step': 200}`
            progress = Progress(step=int(metrics["global_step"]), scope="run")
        elif progress.global_step is None:
            # Lightning/NeMo postfix `global_step=3.2e+4`: the run's step next to the epoch's bar
            progress = replace(progress, global_step=int(metrics["global_step"]))
    if failure is None and metrics:
        failure = nonfinite_loss(metrics, is_loss_key)
    if plan is None:
        plan = _Plan(words, True, bar_form, tail, tuple(matched))
    if progress is None and not metrics and failure is None and columns is None:
        return EMPTY, plan
    info = LineInfo(
        progress=progress,
        metrics=MappingProxyType(metrics) if metrics else NO_METRICS,
        failure=failure,
        columns=columns,
    )
    return info, plan
