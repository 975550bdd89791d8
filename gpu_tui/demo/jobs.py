"""Simulated gpu-tui jobs: one in-memory job table per demo instance.

Nothing the user types is ever run. A job started in the demo (`r` in the dashboard) is a
simulated training run: its log grows with the simulation's clock (one tqdm bar over the whole
run, labelled with the epoch and redrawn with `\\r` every half second of run time; a line per
epoch, `epoch 3 | loss 0.5230 | val_loss 0.6100`; the loss falling with some noise) and it
succeeds (exit 0) after `job_seconds` of simulated time (2.5 minutes by default, so a demo user
sees it end). The first line of its log says that it is a stand-in.

Easter egg, to try the failure alert: a command with the word `oom` in it (`python train.py
--oom`, `oom.py`; not `bloom` or `room`) runs out of GPU memory about 40 % of the way through:
a PyTorch `CUDA out of memory` traceback, exit 1, and the job shows as failed.

A stop (`x`) ends a running job at once as the real runner would after SIGINT:
`stop_requested`, exit 130, a last line about saving a checkpoint.

Everything is a function of the clock and a seeded RNG: a job's log is brought up to "now"
whenever the job table is read (a listing, a log read, each tick of a log follow), on a fixed
grid of steps, so the same clock gives the same bytes however often it is read. Jobs a profile
lists (profiles.JobSpec) exist from the start: their history is written thinned (~300 bar
updates), as if they had started `started_ago_s` before the fleet.
"""

from __future__ import annotations

import math
import posixpath
import random
import re
import time
from collections.abc import Callable
from pathlib import Path

from gpu_tui.core.jobs import JobRequest
from gpu_tui.demo.condarun import CONDA_EXE, CONDA_ROOT, CONDA_SECONDS, START_ENVS, CondaBox
from gpu_tui.demo.profiles import JobSpec, Profile, TrainingSpec
from gpu_tui.services.jobs.sched_plain import RUNNER_NAME

__all__ = [
    "JOB_SECONDS",
    "HOME",
    "STATE_DIR",
    "CONDA_ROOT",
    "CONDA_EXE",
    "CONDA_ENVS",
    "SimJob",
    "JobTable",
    "wants_oom",
    "RUNNER_NAME",
]

# tqdm's bar as a real `tqdm(total=N)` with a `loss=` postfix writes it: the log rules read it
_EIGHTHS = " ▏▎▍▌▋▊▉█"  # tqdm's partial cells, in eighths
_WIDTH = 10


def mmss(seconds: float) -> str:
    """tqdm's time: `MM:SS`, `H:MM:SS` from an hour on."""
    s = int(seconds)
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def tqdm_redraw(desc: str, n: int, total: int, *, it_per_s: float, rate: float, postfix: str) -> str:
    """One redraw, `\\r` first: `\\rdesc: 45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s, loss=0.5]`.

    Elapsed and remaining time follow the run's steady `it_per_s`; `rate` is the one shown
    (tqdm's smoothed, noisy estimate), as tqdm's `1.23s/it` below one item a second.
    """
    frac = n / total
    cells = frac * _WIDTH
    full = int(cells)
    bar = "█" * full
    if full < _WIDTH:
        bar += _EIGHTHS[int((cells - full) * 8)] + " " * (_WIDTH - full - 1)
    rate_text = f"{rate:.2f}it/s" if rate >= 1.0 else f"{1.0 / rate:.2f}s/it"
    return (
        f"\r{desc}: {int(frac * 100):3d}%|{bar}| {n}/{total} "
        f"[{mmss(n / it_per_s)}<{mmss((total - n) / it_per_s)}, {rate_text}, {postfix}]"
    )


JOB_SECONDS = 150.0
"""How long (simulated seconds) a job started in the demo runs."""
HOME = "/root"
STATE_DIR = HOME + "/.gpu-tui"
"""The state dir as `state_dir_path` resolves it (the default `~/.gpu-tui`, logged in as root)."""
CONDA_ENVS = tuple(name for name, _ in START_ENVS if name != "base")
"""Environments besides `base` when the fleet starts (demo/condarun.py; `conda create` adds more)."""

_REDRAW_S = 0.5  # a bar update every half second of run time (tqdm's mininterval is 0.1 s)
_HISTORY_UPDATES = 300  # a job that existed before the fleet started: its past, thinned
_NOISE_LEN = 127
_OOM_AT = 0.4  # the `oom` easter egg fails this far through the run
_OOM_WORD = re.compile(r"(?<![a-z])oom(?![a-z])", re.IGNORECASE)
# directories a job may run in: these and everything under them (the rest "does not exist")
_DIRS = ("/root", "/tmp", "/workspace", "/data", "/mnt")


def wants_oom(command: str) -> bool:
    """The easter egg: the word `oom` (any case) in the command, not inside another word."""
    return _OOM_WORD.search(command) is not None


def lasting(seconds: float, rng: random.Random) -> TrainingSpec:
    """A short run (3 epochs of 500 steps) that ends `seconds` after it starts."""
    seconds = max(0.5, float(seconds))
    warmup = min(3.0, 0.03 * seconds)
    return TrainingSpec(500, 3, 1500 / (seconds - warmup), rng.uniform(2.1, 2.6), rng.uniform(0.25, 0.45), warmup)


class SimJob:
    """One job: the facts the runner would record, and a log (bytes) that grows with the clock."""

    def __init__(
        self,
        job_id: str,
        json_line: str,
        command: str,
        *,
        started_at: float,
        shape: TrainingSpec,
        pid: int,
        rng: random.Random,
        header: str,
        oom: bool = False,
        gpu_name: str = "NVIDIA GeForce RTX 4090",
        gpu_mib: int = 24564,
        stride: int | None = None,
    ) -> None:
        self.id = job_id
        self.json_line = json_line
        """job.json's first line, as the listing prints it."""
        self.command = command
        self.started_at = started_at
        self.shape = shape
        self.pid = pid
        self.log = bytearray()
        self.exit_code: int | None = None
        self.finished_at: float | None = None
        self.stop_requested = False
        self._header = header
        self._gpu_name, self._gpu_mib = gpu_name, gpu_mib
        self._noise = tuple(2.0 * rng.random() - 1.0 for _ in range(_NOISE_LEN))
        self._step = -1  # the last step drawn; -1: the header is not written yet
        self._stride = stride or max(1, round(shape.it_per_s * _REDRAW_S))
        self._fail_step = max(1, int(shape.total * _OOM_AT)) if oom else None
        last = self._fail_step if self._fail_step is not None else shape.total
        self.ends_at = started_at + shape.warmup_s + last / shape.it_per_s
        """When the run ends by itself (success, or the easter egg's OOM)."""
        self._best_val = math.inf

    # ------------------------------------------------------------------ facts

    @property
    def alive(self) -> bool:
        return self.exit_code is None

    @property
    def state(self) -> str:
        if self.exit_code is None:
            return "running"
        if self.stop_requested:
            return "stopped"
        return "succeeded" if self.exit_code == 0 else "failed"

    def listing(self, mark: str) -> str:
        """This job's part of the `_LIST` script's output (services/jobs/runner.py), in its order."""
        lines = [f"{mark} {self.id}", f"json {self.json_line}", f"pid {self.pid}"]
        if self.exit_code is not None:
            lines.append(f"exit_code {self.exit_code}")
        lines.append(f"started_at {int(self.started_at)}")
        if self.finished_at is not None:
            lines.append(f"finished_at {int(self.finished_at)}")
        lines.append(f"alive {0 if self.exit_code is not None else 1}")
        if self.stop_requested:
            lines.append("stop_requested 1")
        lines.append(f"log_bytes {len(self.log)}")
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------------ the run

    def advance(self, now: float, *, history: bool = False) -> None:
        """Bring the log and the facts up to `now`. `history`: the job's past, when the fleet
        starts: bar updates thinned to a few hundred, ending exactly at `now`."""
        if self.exit_code is not None or now < self.started_at:
            return
        if self._step < 0:
            self._write(self._header)
            self._step = 0
        s = self.shape
        ended = now >= self.ends_at
        last = self._fail_step if self._fail_step is not None else s.total
        if ended:
            upto = last
        else:
            upto = min(last, max(0, int((now - self.started_at - s.warmup_s) * s.it_per_s)))
        stride = max(self._stride, (upto - self._step) // _HISTORY_UPDATES) if history else self._stride
        self._draw(upto, stride, exact=ended or history)
        if ended:
            self._end(self.ends_at)

    def stop(self, now: float) -> bool:
        """SIGINT, as the runner's stop would send it: True if it was running."""
        self.advance(now)
        if self.exit_code is not None:
            return False
        e, done = self._position(self._step)
        self._write(
            f"\nKeyboardInterrupt: stopping at epoch {e + 1}, step {done}/{self.shape.steps_per_epoch}; "
            "saving checkpoints/interrupted.pt ... done\n"
        )
        self.stop_requested = True
        self.exit_code = 130  # 128 + SIGINT, as the shell reports it
        self.finished_at = now
        return True

    def _write(self, text: str) -> None:
        self.log += text.encode("utf-8")

    def _loss(self, step: int) -> float:
        s = self.shape
        decay = math.exp(-5.0 * step / max(1, s.total))
        loss = s.loss_end + (s.loss_start - s.loss_end) * decay
        return max(0.0001, loss * (1.0 + 0.06 * self._noise[step % _NOISE_LEN]))

    def _position(self, step: int) -> tuple[int, int]:
        """(epoch index, steps done in it); an epoch's last step counts as its 100 %."""
        e, done = divmod(step, self.shape.steps_per_epoch)
        if done == 0 and step > 0:
            e, done = e - 1, self.shape.steps_per_epoch
        return e, done

    def _bar(self, step: int) -> str:
        """One redraw of the run's bar: one tqdm over every step, its label naming the epoch (so
        its percent and ETA are the whole run's, as the dashboard's "done by" wants)."""
        s = self.shape
        e, _ = self._position(step)
        rate = s.it_per_s * (1.0 + 0.03 * self._noise[(step * 7) % _NOISE_LEN])
        return tqdm_redraw(
            f"Epoch {e + 1}/{s.epochs}",
            step,
            s.total,
            it_per_s=s.it_per_s,
            rate=rate,
            postfix=f"loss={self._loss(step):.4f}",
        )

    def _epoch_line(self, step: int) -> str:
        e = step // self.shape.steps_per_epoch
        val = self._loss(step) * (1.07 + 0.03 * self._noise[(step * 3) % _NOISE_LEN])
        self._best_val = min(self._best_val, val)
        return f"\nepoch {e} | loss {self._loss(step - 1):.4f} | val_loss {val:.4f}\n"

    def _draw(self, upto: int, stride: int, *, exact: bool) -> None:
        """Bar updates at each multiple of `stride` and each epoch's end up to `upto` (and at
        `upto` itself when `exact`)."""
        per = self.shape.steps_per_epoch
        parts: list[str] = []
        step = self._step
        while step < upto:
            n = min((step // stride + 1) * stride, (step // per + 1) * per)
            if n > upto:
                if not exact:
                    break
                n = upto
            parts.append(self._bar(n))
            if n % per == 0:
                parts.append(self._epoch_line(n))
            step = n
        self._step = step
        if parts:
            self._write("".join(parts))

    def _end(self, at: float) -> None:
        s = self.shape
        if self._fail_step is not None:
            self._write(self._oom_text())
            self.exit_code = 1
        else:
            self._write(
                f"Training complete: {s.epochs} epochs in {mmss(at - self.started_at)}, "
                f"best val_loss {self._best_val:.4f}; saved checkpoints/final.pt\n"
            )
            self.exit_code = 0
        self.finished_at = at

    def _oom_text(self) -> str:
        total = self._gpu_mib / 1024.0
        free = min(total, 0.8 + 0.4 * abs(self._noise[5]))
        used = total - free
        return (
            "\nTraceback (most recent call last):\n"
            '  File "train.py", line 187, in <module>\n'
            "    main()\n"
            '  File "train.py", line 151, in main\n'
            "    loss = model(inputs, labels=labels).loss\n"
            '  File "/root/miniconda3/envs/llm/lib/python3.11/site-packages/torch/nn/modules/module.py", '
            "line 1736, in _wrapped_call_impl\n"
            "    return self._call_impl(*args, **kwargs)\n"
            '  File "/root/miniconda3/envs/llm/lib/python3.11/site-packages/torch/nn/functional.py", '
            "line 3104, in cross_entropy\n"
            "    return torch._C._nn.cross_entropy_loss(input, target, weight, reduction, ignore_index)\n"
            f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            f"capacity of {total:.2f} GiB of which {free:.2f} GiB is free. Including non-PyTorch memory, "
            f"this process has {used:.2f} GiB memory in use. Of the allocated memory {used - 1.2:.2f} GiB "
            "is allocated by PyTorch, and 1.07 GiB is reserved by PyTorch but unallocated. If reserved but "
            "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
            "avoid fragmentation.  See documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
        )


def _header(gpu_name: str, gpu_count: int, note: str | None) -> str:
    lines = [note] if note else []
    lines += [
        f"Using {gpu_count} GPU(s): cuda:0 ({gpu_name})",
        "Dataset: 45000 train / 5000 val samples",
        "Model: 23.5M trainable parameters",
    ]
    return "\n".join(lines) + "\n"


class JobTable:
    """One demo instance's jobs, its runner install and its conda (`conda`, demo/condarun.py), as
    the job and conda scripts see them."""

    def __init__(
        self,
        profile: Profile,
        *,
        clock: Callable[[], float],
        t0: float,
        seed_key: str,
        fs: Path,
        job_seconds: float = JOB_SECONDS,
        conda_seconds: float = CONDA_SECONDS,
    ) -> None:
        self.profile = profile
        self.clock = clock
        self.job_seconds = job_seconds
        self.jobs: dict[str, SimJob] = {}
        self.runners: set[str] = set()
        """Runner scripts installed in `<state_dir>/bin/` (their file names)."""
        self._rng = random.Random(f"gpu-tui-demo-jobs:{seed_key}")
        self._next_pid = 20_000 + self._rng.randrange(20_000)
        self.conda = CondaBox(fs, new_pid=self.new_pid, seed_key=seed_key, seconds=conda_seconds)
        """The instance's `/` (`fs`) with its conda install, and conda/pip operations (pids from this
        table's counter)."""
        for spec in profile.jobs:
            self._add_existing(spec, t0)

    # ------------------------------------------------------------------ reading

    def advance(self) -> float:
        """Bring every job up to the clock; returns that time."""
        now = self.clock()
        for job in self.jobs.values():
            job.advance(now)
        return now

    def get(self, job_id: str) -> SimJob | None:
        return self.jobs.get(job_id)

    def listing(self, mark: str) -> str:
        """The `_LIST` script's output: every job, ordered as the shell's glob orders them."""
        self.advance()
        return "".join(self.jobs[k].listing(mark) for k in sorted(self.jobs))

    @property
    def state_dir_exists(self) -> bool:
        return bool(self.runners or self.jobs)

    # ------------------------------------------------------------------ writing

    def new_pid(self) -> int:
        """A pid no other simulated process (job, conda operation) of this instance has had."""
        self._next_pid += self._rng.randint(3, 40)
        return self._next_pid

    def _add_existing(self, spec: JobSpec, t0: float) -> None:
        t = spec.training
        started = t0 - spec.started_ago_s
        prefix = f"{CONDA_ROOT}/envs/{spec.conda_env}" if spec.conda_env else None
        job_id = time.strftime("%Y%m%d-%H%M%S", time.gmtime(started)) + f"-{self._rng.getrandbits(16):04x}"
        req = JobRequest(
            id=job_id, command=spec.command, cwd=spec.cwd, conda_env=spec.conda_env, conda_prefix=prefix, name=spec.name
        )
        job = self._make(job_id, req.to_json(), spec.command, started, t, pid=spec.pid or self.new_pid(), note=None)
        job.advance(t0, history=True)
        self.jobs[job_id] = job
        self.runners.add(RUNNER_NAME)

    def _make(
        self,
        job_id: str,
        json_line: str,
        command: str,
        started: float,
        shape: TrainingSpec,
        *,
        pid: int,
        note: str | None,
    ) -> SimJob:
        p = self.profile
        return SimJob(
            job_id,
            json_line,
            command,
            started_at=started,
            shape=shape,
            pid=pid,
            rng=random.Random(f"gpu-tui-demo-job:{job_id}"),
            header=_header(p.gpu.name, p.gpu_count, note),
            oom=wants_oom(command),
            gpu_name=p.gpu.name,
            gpu_mib=p.gpu.memory_total_mib,
        )

    def start(self, job_id: str, json_line: str, command: str) -> SimJob:
        """A new job, starting now (a job with the same id is replaced, as its directory would be)."""
        now = self.clock()
        rng = random.Random(f"gpu-tui-demo-job:{job_id}")
        shape = lasting(self.job_seconds, rng)
        first = next((line for line in command.splitlines() if line.strip()), "").strip()
        first = "".join(c if c.isprintable() else "?" for c in first)
        if len(first) > 100:
            first = first[:99] + "…"
        note = f"[gpu-tui demo] `{first}` is not run: a simulated training run stands in for it"
        job = self._make(job_id, json_line, command, now, shape, pid=self.new_pid(), note=note)
        job.advance(now)
        self.jobs[job_id] = job
        return job

    def stop(self, job_id: str) -> bool:
        job = self.jobs.get(job_id)
        return job is not None and job.stop(self.clock())

    def remove(self, job_id: str) -> bool:
        return self.jobs.pop(job_id, None) is not None

    # ------------------------------------------------------------------ the box

    @staticmethod
    def expand(word: str) -> str:
        """A path word (already unquoted) as an absolute, normalised path: `$HOME`, `~` -> /root."""
        for home in ("${HOME}", "$HOME", "~"):
            if word == home or word.startswith(home + "/"):
                word = HOME + word[len(home) :]
                break
        if not word.startswith("/"):
            word = HOME + "/" + word
        return posixpath.normpath(word)

    def dir_exists(self, path: str) -> bool:
        path = self.expand(path)
        roots = _DIRS + ((self.profile.workdir,) if self.profile.workdir else ())
        return path == "/" or any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)

    def conda_prefixes(self) -> list[str]:
        """`conda env list`'s prefixes now: base first (created and removed envs included)."""
        return self.conda.prefixes()
