"""The run's progress from a log's bars and counters, line by line (core/trainlog/summary's part).

A line's Progress (core/trainlog/line, core/trainlog/counters) is what that line shows; `RunProgress` follows
them in order and says where the whole run is:

- epoch k of N with the inner bar's fraction f: percent = ((k-1)+f)/N. A log that counts epochs
  from 0 (it printed epoch 0, or the tool does: YOLOv5/v7, timm, Lightning, PaddleDetection)
  gives (k+f)/N, and where it prints `k/N` from 0 (YOLOv5 `0/99`, the PyTorch tutorial's
  `Epoch 0/59`) N is the last epoch's number: (k+f)/(N+1). An epoch header with no bar yet
  counts f = 0, and so does an epoch's line with no inner counter (`epoch 008 | loss ...`). N is the printed one,
  else the run's announcement (`Num Epochs = 3`, `Scheduled epochs: 300`, `max_epochs=12`).
- a step/iteration counter with a total (Megatron `iteration 120/ 5000`, `Iter [50/90000]`,
  OpenNMT `Step 200/700`, `step 100/1000`): step/total;
- else the bar's own percent (`scope == "bar"`).

A bar labelled with its epoch that never falls below (k-1)/N in epoch k spans the whole run:
its own percent is the run's.

Bars that come under a counter printed on the bar's own line (mmdet, YOLO rows, fairseq) and
carry no epoch themselves are validation bars: they do not move the run's progress.

The run's ETA, in this order: one the log prints for the run (mmdet/mmengine/Paddle `eta:`),
or implies (Megatron's ms per iteration times the iterations left, OpenNMT's seconds so far
scaled to the steps left); the inner bar's own ETA plus, for each epoch still to come, one
epoch as long as the inner bar's elapsed + remaining time (else its total over its rate); for
a step counter without either, the rate between the first and the latest timestamped counter
lines. Else None: the inner bar's ETA is never passed off as the run's. With no run counter at
all, the bar's own ETA (`scope == "bar"`).
"""

from __future__ import annotations

from gpu_tui.core.trainlog.model import Progress, replace

__all__ = ["RunProgress"]

_INLINE = ("inner", "zero", "zero-last")


class RunProgress:
    """Follows each line's Progress (and the run-length announcements) and holds the run's."""

    __slots__ = (
        "progress",
        "epochs_hint",
        "steps_hint",
        "_epoch",
        "_epochs",
        "_zero",
        "_last_index",
        "_inline",
        "_global",
        "_first",
        "_seen_epoch",
        "_run_counter",
        "_spans",
        "_restarts",
        "_over_steps",
    )

    def __init__(self) -> None:
        self.progress: Progress | None = None
        """The run's progress as of the latest line that said something about it."""
        self.epochs_hint: int | None = None
        self.steps_hint: int | None = None
        self._epoch: int | None = None
        self._epochs: int | None = None
        self._zero = False
        self._last_index = False
        self._inline = False
        self._global: int | None = None
        self._first: tuple[float, int] | None = None
        self._seen_epoch = False
        self._run_counter = False
        self._spans = False  # one bar over the whole run, labelled with the epoch it is in
        self._restarts = False  # ... or seen to restart at an epoch's start (sticky)
        self._over_steps = False  # a bar over the run's steps was seen: epoch lines only name the epoch

    def hint(self, epochs: int | None = None, steps: int | None = None) -> None:
        """The run's length as a line announced it."""
        if epochs is not None:
            self.epochs_hint = epochs
        if steps is not None:
            self.steps_hint = steps
        if self.progress is not None and self.progress.scope == "bar" and not self._seen_epoch:
            self.progress = replace(
                self.progress,
                epochs=self.progress.epochs or self.epochs_hint,
                steps=self.progress.steps or self.steps_hint,
            )

    def training_seen(self) -> None:
        """A training loss was printed: a run length announced earlier is progress now, even
        with no counter (LLaMA-Factory's dicts carry only a fractional epoch)."""
        if self.progress is None and (self.epochs_hint is not None or self.steps_hint is not None):
            self.progress = Progress(epochs=self.epochs_hint, steps=self.steps_hint, scope="bar")

    def add(self, p: Progress) -> None:
        """One line's Progress, in log order."""
        scope = p.scope
        if p.global_step is not None:
            self._global = p.global_step
        if scope == "bar" and p.steps is not None and p.steps == self.steps_hint and p.step is not None:
            scope = "steps"  # an unlabelled bar as long as the run's announced steps: HF Trainer's
        if scope == "steps":
            self._steps_bar(p)
            return
        if scope == "bar" or scope == "yolo":
            if self._run_counter and not self._seen_epoch:
                return  # the run's step counter says more than a bar without an epoch
            if self._spans and scope == "bar":
                return  # a validation bar under the epoch-labelled one (YOLO's `Class Images ...`)
            if self._seen_epoch:
                if self._inline:
                    return  # a validation bar under an mmdet/YOLO/fairseq counter
                self.progress = self._epoch_progress(p, None)
                return
            self.progress = self._bar_progress(p)
            return
        if scope == "run":
            if p.step is not None:
                self._global = p.step
            if p.steps is None and self.steps_hint is None and p.percent is None:
                # a step counter without a total (`step 100 | loss 2.3`, Caffe's `Iteration N`):
                # the run's step, but a bar still says more about where the run is
                current = self.progress
                self.progress = replace(current, step=p.step) if current is not None else self._step_progress(p)
                return
            self._run_counter = True
            self.progress = self._step_progress(p)
            return
        if self._over_steps and scope in ("header", "summary") and self.progress is not None:
            # kohya's `epoch 17/50` between the states of its `steps:` bar: the bar still says where the run is
            self._epoch = p.epoch if p.epoch is not None else self._epoch
            self._epochs = p.epochs or self._epochs
            self.progress = replace(self.progress, epoch=self._epoch, epochs=self._epochs or self.epochs_hint)
            return
        # an epoch counter: header, summary, or inline with an inner counter/bar
        row = p.desc is not None and p.desc.lstrip()[:1].isdigit()  # a YOLO row: its bar is the epoch's
        if scope == "inner" and p.epochs and p.epoch is not None and p.epoch > 1 and p.percent is not None and not row:
            # `Epoch 3/10: 25%|...`: a bar that restarts every epoch is below (k-1)/N at some point
            # of epoch k; one that is never below it spans the run
            # the step count is exact where tqdm's percent is rounded down (808/2400 shows 33%)
            fraction = p.step / p.steps if p.step is not None and p.steps else p.percent / 100.0
            if fraction < (p.epoch - 1) / p.epochs - 1e-9:
                self._restarts = True
            self._spans = not self._restarts
        if scope == "summary" and p.epoch is not None and p.epoch == self._epoch and self.progress is not None:
            return  # the epoch's own summary line after its bar: the bar said more
        if self._spans:
            if p.percent is not None:
                self.progress = replace(self._bar_progress(p), epoch=p.epoch, epochs=p.epochs, scope="run")
            return
        if p.epoch is not None:
            if p.epoch == 0:
                self._zero = True
            if scope in ("zero", "zero-last"):
                self._zero = True
            if p.epochs is not None:
                self._epochs = p.epochs
                self._last_index = self._zero and (scope != "zero")
            self._epoch = p.epoch
            self._seen_epoch = True
        self._inline = scope in _INLINE
        if scope == "header":
            self.progress = self._epoch_progress(None, 0.0)
        elif scope == "summary":
            self.progress = self._epoch_progress(None, 0.0)
        else:
            self.progress = self._epoch_progress(p, None)

    # ------------------------------------------------------------------ internals

    def _steps_bar(self, p: Progress) -> None:
        """A bar over the run's steps: its n/total are the run's step/steps, its ETA the run's."""
        if p.epoch is not None:
            self._epoch = p.epoch
            self._epochs = p.epochs or self._epochs
        self._global = p.step
        self._run_counter = True
        self._over_steps = True
        run = self._step_progress(replace(p, scope="run"))
        self.progress = replace(
            run, eta_seconds=p.eta_seconds, bar_percent=p.percent, bar_step=p.step, bar_steps=p.steps
        )

    def _bar_progress(self, p: Progress) -> Progress:
        return replace(
            p,
            bar_percent=p.percent,
            bar_step=p.step,
            bar_steps=p.steps,
            scope="bar",
            epochs=p.epochs or self.epochs_hint,
            step=self._global,
            steps=self.steps_hint,
            global_step=None,
            run_eta_seconds=None,
            clock=None,
        )

    def _rate_eta(self, clock: float | None, step: int | None, steps: int | None) -> int | None:
        if clock is None or step is None:
            return None
        if self._first is None or step < self._first[1]:
            self._first = (clock, step)
            return None
        t0, s0 = self._first
        if step <= s0 or clock <= t0 or steps is None or steps < step:
            return None
        return round((steps - step) * (clock - t0) / (step - s0))

    def _step_progress(self, p: Progress) -> Progress:
        steps = p.steps or self.steps_hint
        percent = 100.0 * p.step / steps if p.step is not None and steps else p.percent
        eta = p.run_eta_seconds
        if eta is None:
            eta = self._rate_eta(p.clock, p.step, steps)
        epoch = p.epoch if p.epoch is not None else self._epoch
        return replace(
            p,
            percent=percent,
            steps=steps,
            eta_seconds=eta,
            scope="run",
            bar_percent=None,
            epoch=epoch,
            epochs=p.epochs or self._epochs or self.epochs_hint,
            global_step=None,
            run_eta_seconds=None,
            clock=None,
        )

    def _epoch_progress(self, inner: Progress | None, fraction: float | None) -> Progress:
        epoch, epochs = self._epoch, self._epochs
        count = epochs if epochs is not None else self.epochs_hint
        last_index = self._last_index and epochs is not None
        if inner is not None:
            if inner.percent is not None:
                fraction = inner.percent / 100.0
            elif inner.step is not None and inner.steps:
                fraction = inner.step / inner.steps
        step = self._global
        base = inner if inner is not None else Progress()
        if epoch is None or not count:
            # no run length: the inner counter is all there is (an ETA the log gives for the run wins)
            eta = base.run_eta_seconds if base.run_eta_seconds is not None else base.eta_seconds
            steps = self.steps_hint
            if step is not None and steps:  # the run's step counter (Lightning's max_steps)
                return replace(
                    base,
                    epoch=epoch,
                    epochs=epochs,
                    step=step,
                    steps=steps,
                    scope="run",
                    percent=min(100.0, 100.0 * step / steps),
                    eta_seconds=base.run_eta_seconds,
                    bar_percent=base.percent,
                    bar_step=base.step,
                    bar_steps=base.steps,
                    global_step=None,
                    run_eta_seconds=None,
                    clock=None,
                )
            return replace(
                base,
                epoch=epoch,
                epochs=epochs,
                step=step,
                steps=steps,
                scope="bar",
                bar_percent=base.percent,
                bar_step=base.step,
                bar_steps=base.steps,
                eta_seconds=eta,
                global_step=None,
                run_eta_seconds=None,
                clock=None,
            )
        done = epoch if self._zero else epoch - 1
        total = count + 1 if last_index else count
        f = min(max(fraction or 0.0, 0.0), 1.0)
        percent = min(100.0, max(0.0, 100.0 * (done + f) / total))
        eta = base.run_eta_seconds
        if eta is None and inner is not None:
            left = max(0, total - done - 1)
            if inner.eta_seconds is not None and inner.elapsed_seconds is not None:
                eta = inner.eta_seconds + left * (inner.elapsed_seconds + inner.eta_seconds)
            elif inner.rate and inner.steps:
                eta = round(((1.0 - f) + left) * inner.steps / inner.rate)
        if eta is None and inner is not None and inner.steps and inner.step is not None:
            run_step = done * inner.steps + inner.step
            eta = self._rate_eta(inner.clock, run_step, total * inner.steps)
        return replace(
            base,
            percent=percent,
            eta_seconds=eta,
            epoch=epoch,
            epochs=epochs if epochs else count,
            step=step,
            steps=self.steps_hint,
            scope="run",
            bar_percent=base.percent,
            bar_step=base.step,
            bar_steps=base.steps,
            global_step=None,
            run_eta_seconds=None,
            clock=None,
        )
