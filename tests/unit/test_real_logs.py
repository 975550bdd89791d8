"""LogStream + LogSummary against the REAL corpus: tests/data/logs/real/<tool>/<name>.log.

Each log comes with `<name>.expect.json`, the values a person reads off it (sources in
tests/data/logs/real/SOURCES.md). Every log is fed whole and in random chunks; each field is
compared:

- `epoch`, `epochs`, `step`, `steps`: LogSummary.progress's, exactly (null: the log does not say);
- `inner_percent`: the inner bar's own percent (`bar_percent`), to 0.01; not checked when the
  expectation is null (a person reads no bar there);
- `percent`: the run's percent, derived from the expectation by core/trainlog/progress's rule:
  epoch k of N with inner fraction f (the bar's percent, else the in-epoch counter the
  expectation names as `metrics.inner`/`metrics.iter` "k/N") -> ((k-1)+f)/N, or (k+f)/(N+1) where the log counts from 0
  (its note says "zero-based"); step/steps first where both are known (the run's own counter);
  not checked when neither is known;
- `last_loss`: relative tolerance 1e-3 (`"nan"`, `"inf"` for those);
- `metrics`: each numeric one by name (case-insensitive), relative tolerance 1e-3; text values
  (`"15G"`) are not checked;
- `failure_kind`: the reason's leading words (`NCCL`, `killed`, `Traceback`...), or the words
  before its first `:` containing it (`killed (time limit)` for `time limit`); null: no failure;
- `failure_detail`: a substring of the reason.

A field the parser still gets wrong is listed in KNOWN_MISSES with why; a listed field that
comes out right fails too, so the set stays true. `test_share_of_fields_right` prints the share
of fields right per tool and per failure kind (`pytest -s`).
"""

from __future__ import annotations

import json
import math
import os
import random
from collections import defaultdict
from pathlib import Path

import pytest

from gpu_tui.core.trainlog.stream import LogStream
from gpu_tui.core.trainlog.summary import LogSummary

# GPU_TUI_REAL_LOGS: another copy of the corpus (a worktree still collecting it)
REAL = Path(os.environ.get("GPU_TUI_REAL_LOGS") or Path(__file__).resolve().parents[1] / "data" / "logs" / "real")
CASES = sorted(REAL.glob("*/*.log"))
IDS = [f"{p.parent.name}/{p.stem}" for p in CASES]

# (case id, field): what the parser still reads wrong, and why.
KNOWN_MISSES: dict[tuple[str, str], str] = {
    (
        "axolotl/axolotl-1813-wrapped-loss-dict-epoch0",
        "metrics.epoch",
    ): "the dict is hard-wrapped by the terminal inside `'epoch': \\n0.0}`",
    (
        "colossalai/colossalai-1400-legacy-trainer-epoch5-rich-info",
        "inner_percent",
    ): "ColossalAI's legacy trainer draws a rich bar, which is not read",
    (
        "colossalai/colossalai-1400-legacy-trainer-epoch5-rich-info",
        "metrics.tflops",
    ): "`TFLOPS: 7.6092` inside a rich log line's columns",
    (
        "deepspeed/ds-launcher-steps-then-ctrl-c-sigkill-handler",
        "epoch",
    ): "`Epoch: [0],Step [4/5]` (no space after the comma): read as the step counter only",
    (
        "lightning/tsai-s12-epoch23-max-epochs-24-test-bar",
        "percent",
    ): "a notebook's output: the bar's percent and its label are on separate lines",
    (
        "lightning/tsai-s12-epoch23-max-epochs-24-test-bar",
        "last_loss",
    ): "the latest is `loss/train_step`; a person reads the epoch's `loss/train_epoch`",
    ("lightning/tsai-s12-epoch23-max-epochs-24-test-bar", "metrics.v_num"): "v_num: deliberately not a metric",
    (
        "bus-error/pipedream-epoch-then-bus-error-traceback",
        "metrics.epoch_seconds",
    ): "`Epoch 0: 6843.771 seconds` is read as a clock-like `time`, not a duration named for the epoch",
    (
        "bus-error/smp-train-bar-glued-bus-error",
        "last_loss",
    ): "segmentation_models' postfix writes `dice_loss - 0.9637` (a dash, not `:`/`=`)",
    ("bus-error/smp-train-bar-glued-bus-error", "metrics.iou_score"): "the same ` - ` separator",
    (
        "bus-error/yolov8-val-bar-glued-bus-error",
        "inner_percent",
    ): "the validation bar (0/21) under the YOLO row is not the run's inner bar: the row's 100% is kept",
    ("bus-error/yolov8-val-bar-glued-bus-error", "percent"): "follows from the row's bar (100%) being the inner one",
    (
        "cuda-error/cryosbi-epoch-bar-unspecified-launch-failure",
        "epoch",
    ): "the epoch is printed on lines cut to `98/150` inside a free-form label the bar rules do not read",
    ("cuda-error/cryosbi-epoch-bar-unspecified-launch-failure", "epochs"): "as epoch",
    ("cuda-error/cryosbi-epoch-bar-unspecified-launch-failure", "percent"): "as epoch",
    (
        "cuda-error/ms-swift-grpo-step1-illegal-instruction",
        "inner_percent",
    ): "ms-swift's dict line after the bar is the run's step counter; the bar's own 0% is not kept beside it",
    (
        "cuda-error/rvc-epochs-then-illegal-instruction",
        "step",
    ): "RVC prints its global step as `[800, 9.99e-05]`, a bare list",
    (
        "cuda-error/rvc-epochs-then-illegal-instruction",
        "last_loss",
    ): "a GAN's losses (loss_disc, loss_gen ...) have no total; the parser takes loss_disc",
    ("cuda-error/rvc-epochs-then-illegal-instruction", "metrics.lr"): "the same bare list `[800, 9.99e-05]`",
    (
        "cuda-error/rvc-epochs-then-illegal-instruction",
        "metrics.train_epoch_percent",
    ): "`Train Epoch: 5 [44%]` is read as the epoch only",
    (
        "diffusers/sd-dreambooth-ext-steps-bar-with-sample-bar",
        "inner_percent",
    ): "a sample-image bar glued onto the training bar's line: the first bar on a line wins (the training one)",
    (
        "keras/keras-core-torch-three-fits-then-traceback",
        "failure_kind",
    ): "the paste ends inside the traceback, before its exception line: a traceback is named by that line",
    (
        "lightning/nnue-epoch3-stopped-glued-max-epochs",
        "percent",
    ): "epoch 3 (from 0) of max_epochs=4 at 100%: the parser reads the run as done, the rule gives 75%",
    (
        "lightning/nnue-epoch3-stopped-glued-max-epochs",
        "metrics.v_num",
    ): "v_num is Lightning's run version in every bar postfix: deliberately not a metric",
    (
        "lightning/pl17-max-epochs-1-reached-bar-twice",
        "inner_percent",
    ): "the bar is drawn twice on one line with the `max_epochs=1` message between: no bar state is final",
    ("lightning/pl17-max-epochs-1-reached-bar-twice", "percent"): "as inner_percent",
    ("lightning/pl17-max-epochs-1-reached-bar-twice", "metrics.v_num"): "v_num: deliberately not a metric",
    (
        "llama-factory/lf092-bar-glued-callback-dict-35-40-of-625",
        "step",
    ): "an unlabelled bar is inner unless its total is the announced steps (none in this paste)",
    ("llama-factory/lf092-bar-glued-callback-dict-35-40-of-625", "steps"): "as step",
    ("llama-factory/lf092-bar-glued-callback-dict-35-40-of-625", "percent"): "as step",
    (
        "ms-swift/swift-ling3-bar-16pct-rank1-traceback",
        "step",
    ): "ms-swift's `Train:` bar: per-epoch loops use that label too, so not the run's steps",
    ("ms-swift/swift-ling3-bar-16pct-rank1-traceback", "steps"): "as step",
    ("ms-swift/swift-ling3-bar-16pct-rank1-traceback", "percent"): "as step",
    (
        "ms-swift/swift-ling3-bar-16pct-rank1-traceback",
        "failure_kind",
    ): "the paste ends inside the traceback, before its exception line",
    (
        "ms-swift/swift2-dict-lines-bar-glued-traceback",
        "step",
    ): "the `Train:` bar, as in swift-ling3 (this older ms-swift prints `global_step` alone in its dicts)",
    ("ms-swift/swift2-dict-lines-bar-glued-traceback", "steps"): "as step",
    ("ms-swift/swift2-dict-lines-bar-glued-traceback", "percent"): "as step",
    (
        "ms-swift/swift2-dict-lines-bar-glued-traceback",
        "failure_kind",
    ): "the paste ends inside the traceback, before its exception line",
    ("ms-swift/swift3-bar-then-checkpoint-info-rank7-traceback", "step"): "the `Train:` bar, as in swift-ling3",
    ("ms-swift/swift3-bar-then-checkpoint-info-rank7-traceback", "steps"): "as step",
    ("ms-swift/swift3-bar-then-checkpoint-info-rank7-traceback", "percent"): "as step",
    (
        "ms-swift/swift3-bar-then-checkpoint-info-rank7-traceback",
        "failure_kind",
    ): "the paste ends inside the traceback, before its exception line",
    (
        "nnunet/nnunetv2-epoch195-block-negative-loss",
        "metrics.pseudo_dice",
    ): "`Pseudo dice [0.8399]`: a bracketed list per class",
    ("nnunet/nnunetv2-epoch195-block-negative-loss", "metrics.lr"): "`Current learning rate: 0.00036` is named `rate`",
    ("nnunet/nnunetv2-epoch195-block-negative-loss", "metrics.epoch_time_s"): "`Epoch time: 61.1 s` is named `time`",
    (
        "nnunet/nnunetv2-epoch195-block-negative-loss",
        "metrics.ema_pseudo_dice",
    ): "`Yayy! New best EMA pseudo Dice: 0.8196` is named `dice`",
    ("nnunet/nnunetv2-epochs-0-to-2-32-class-dice", "metrics.lr"): "named `rate`, as in nnunetv2-epoch195",
    ("nnunet/nnunetv2-epochs-0-to-2-32-class-dice", "metrics.ema_pseudo_dice"): "named `dice`, as in nnunetv2-epoch195",
    (
        "no-space/f5-tts-epoch-bar-streamwriter-data-pkl",
        "step",
    ): "the run's step is in the bar's postfix (`step=100`), which is read as a metric only",
    (
        "paddle/ppocr-det-eval-bar-after-step50",
        "inner_percent",
    ): "the eval bar under PaddleOCR's epoch counter is read as a validation bar, not the inner one",
    ("paddle/ppocr-det-eval-bar-after-step50", "percent"): "as inner_percent",
    (
        "ultralytics/yolo11-tune-cut-bars-zero-map",
        "epoch",
    ): "rows pasted from a terminal cut at its width: no bar counts, no `[time<time]` block",
    ("ultralytics/yolo11-tune-cut-bars-zero-map", "epochs"): "as epoch",
    ("ultralytics/yolo11-tune-cut-bars-zero-map", "inner_percent"): "as epoch",
    ("ultralytics/yolo11-tune-cut-bars-zero-map", "percent"): "as epoch",
    (
        "ultralytics/yolo11-tune-cut-bars-zero-map",
        "metrics.box_loss",
    ): "the row is read only with its bar: cut rows give none",
    ("ultralytics/yolo11-tune-cut-bars-zero-map", "metrics.cls_loss"): "as box_loss",
    ("ultralytics/yolo11-tune-cut-bars-zero-map", "metrics.dfl_loss"): "as box_loss",
    (
        "ultralytics/yolo11-tune-cut-bars-zero-map",
        "metrics.mAP50-95",
    ): "the header is cut to `mAP50-`: the column takes that name",
    (
        "unsloth/unsloth-banner-notebook-progress-22-of-290",
        "metrics.epoch",
    ): "the notebook bar's `Epoch 0.36/5` gives the run's epochs, not a fractional epoch metric",
    (
        "unsloth/unsloth-train-banner-bars-step-loss-glued",
        "last_loss",
    ): "`80, 2.0887` (step, loss) glued after the bar without a name",
}


def _feed(data: bytes, chunks: list[bytes]) -> LogSummary:
    stream, summary = LogStream(), LogSummary()
    for chunk in chunks:
        summary.consume(stream.feed(chunk))
    summary.consume(stream.close())
    return summary


def _chunkings(data: bytes, seed: int) -> list[list[bytes]]:
    rng = random.Random(seed)
    cuts, pos = [], 0
    while pos < len(data):
        pos += rng.randint(1, 2000)
        cuts.append(pos)
    return [[data], [data[a:b] for a, b in zip([0, *cuts[:-1]], cuts, strict=True)]]


def _close(got: float | None, want: object, rel: float = 1e-3) -> bool:
    if want is None:
        return got is None
    if got is None:
        return False
    if want == "nan":
        return math.isnan(got)
    if want == "inf":
        return math.isinf(got) and got > 0
    assert isinstance(want, int | float)
    return math.isclose(got, float(want), rel_tol=rel, abs_tol=1e-9)


def _inner_fraction(want: dict[str, object]) -> float:
    """f of the rule: the inner bar's percent, else the in-epoch counter a person reads
    (`metrics.inner` / `metrics.iter`, "k/N": mmdet's `Epoch [2][30/35]`), else 0."""
    inner = want.get("inner_percent")
    if isinstance(inner, int | float):
        return float(inner) / 100.0
    raw = want.get("metrics")
    counter = raw.get("inner") or raw.get("iter") if isinstance(raw, dict) else None
    if isinstance(counter, str) and "/" in counter:
        k, n = counter.split("/", 1)
        return int(k) / int(n) if int(n) else 0.0
    return 0.0


def _run_percent(want: dict[str, object]) -> float | None:
    step, steps = want.get("step"), want.get("steps")
    if isinstance(step, int) and isinstance(steps, int) and steps:
        return 100.0 * step / steps  # the run's own step counter says it exactly
    epoch, epochs = want.get("epoch"), want.get("epochs")
    if isinstance(epoch, int) and isinstance(epochs, int) and epochs:
        f = _inner_fraction(want)
        if "zero-based" in str(want.get("note", "")):
            return min(100.0, 100.0 * (epoch + f) / (epochs + 1))
        return min(100.0, max(0.0, 100.0 * (epoch - 1 + f) / epochs))
    return None


def _kind_matches(reason: str | None, kind: object) -> bool:
    if kind is None:
        return reason is None
    if reason is None:
        return False
    kind = str(kind)
    return reason.startswith(kind) or kind in reason.split(":", 1)[0]


def fields_of(summary: LogSummary, want: dict[str, object]) -> dict[str, bool]:
    """Which of the expectation's fields the summary gets right."""
    p = summary.progress
    right: dict[str, bool] = {}
    for key in ("epoch", "epochs", "step", "steps"):
        right[key] = (getattr(p, key) if p is not None else None) == want.get(key)
    if want.get("inner_percent") is not None:
        right["inner_percent"] = _close(p.bar_percent if p is not None else None, want["inner_percent"], 1e-4)
    percent = _run_percent(want)
    if percent is not None:
        right["percent"] = p is not None and p.percent is not None and abs(p.percent - percent) < 0.01
    right["last_loss"] = _close(summary.last_loss, want.get("last_loss"))
    metrics = {k.lower(): v for k, v in summary.metrics.items()}
    raw = want.get("metrics")
    for name, value in (raw if isinstance(raw, dict) else {}).items():
        if isinstance(value, int | float):
            right[f"metrics.{name}"] = _close(metrics.get(name.lower()), value)
    reason = summary.failure
    right["failure_kind"] = _kind_matches(reason, want.get("failure_kind"))
    detail = want.get("failure_detail")
    if detail is not None:
        right["failure_detail"] = reason is not None and str(detail).strip() in reason
    return right


def _load(path: Path) -> tuple[bytes, dict[str, object]]:
    want = json.loads(path.with_name(path.stem + ".expect.json").read_text(encoding="utf-8"))
    return path.read_bytes(), want


def test_corpus_is_there_and_paired() -> None:
    if not REAL.is_dir():
        pytest.skip("no real corpus in this checkout")
    assert CASES
    for path in CASES:
        assert path.with_name(path.stem + ".expect.json").is_file(), path
    assert set(KNOWN_MISSES) <= {(i, f) for i in IDS for f in _all_fields(i)}, "a miss names no case/field"


def _all_fields(case_id: str) -> list[str]:
    path = CASES[IDS.index(case_id)]
    _, want = _load(path)
    return [*fields_of(LogSummary(), want)]


@pytest.mark.parametrize("path", CASES, ids=IDS)
def test_real_log(path: Path) -> None:
    data, want = _load(path)
    case_id = f"{path.parent.name}/{path.stem}"
    results = []
    for chunks in _chunkings(data, seed=len(data)):
        summary = _feed(data, chunks)
        right = fields_of(summary, want)
        results.append((right, summary.failure, summary.progress, summary.last_loss))
        wrong = {f for f, ok in right.items() if not ok and (case_id, f) not in KNOWN_MISSES}
        stale = {f for f, ok in right.items() if ok and (case_id, f) in KNOWN_MISSES}
        p = summary.progress
        assert not wrong, (case_id, wrong, p, summary.last_loss, summary.failure)
        assert not stale, (case_id, "listed in KNOWN_MISSES but right now", stale)
    first = results[0]
    assert all(r[0] == first[0] and r[1] == first[1] for r in results), "chunkings disagree"


def score() -> tuple[dict[str, list[int]], dict[str, list[int]], int]:
    """(right/total per tool, per failure kind, number of logs)."""
    per_tool: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path in CASES:
        data, want = _load(path)
        right = fields_of(_feed(data, [data]), want)
        tool = str(want.get("tool") or path.parent.name)
        kind = str(want.get("failure_kind") or "none")
        for ok in right.values():
            for table, key in ((per_tool, tool), (per_kind, kind)):
                table[key][0] += ok
                table[key][1] += 1
    return dict(per_tool), dict(per_kind), len(CASES)


def test_share_of_fields_right() -> None:
    if not CASES:
        pytest.skip("no real corpus in this checkout")
    per_tool, per_kind, n = score()
    right = sum(v[0] for v in per_tool.values())
    total = sum(v[1] for v in per_tool.values())
    print(f"\nreal corpus: {n} logs, {right}/{total} fields right ({100 * right / total:.1f}%)")
    for title, table in (("tool", per_tool), ("failure kind", per_kind)):
        for key, (ok, count) in sorted(table.items()):
            print(f"  {title:12} {key:28} {ok:3}/{count:<3} {100 * ok / count:5.1f}%")
    assert right >= total - len(KNOWN_MISSES)
