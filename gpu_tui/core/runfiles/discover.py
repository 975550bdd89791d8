"""Which of a job's files are a run's own metrics, and whose: the decisions of the walk the
instance's summariser makes (services/jobs/series/runfiles.py), without its I/O.

- `kind_of(parts)`: a file's path below a walked root (its components) -> what it is
  (`events.out.tfevents.*`, `trainer_state.json`, `metrics.csv`, `mlflow.db`, or an MLflow
  file-store metric `mlruns/<experiment>/<run>/metrics/<key>`), or None.
- `skip_dir(name)`: a directory the walk does not enter (hidden ones, environments, datasets).
- `owns_event_file(...)`: whether an event file is this job's. Its name carries the writer's
  host and pid; a writer still running is the job's when it is the job's shell (JOBDIR/pid),
  in its process group or session, or below it; a writer that is gone (or on another host: a
  SLURM node) counts when the file was started while the job ran.

The walk is bounded (a dataset of a million files must not stall a catch-up): MAX_DEPTH levels
below a root, MAX_ENTRIES directory entries looked at per catch-up over every root, and no
more than MAX_DIR_ENTRIES of one directory (a bigger one is data: its subdirectories are not
entered). Roots are visited breadth first, so what lies near a root is found first.
Loads on python3.6 (bundle.py ships it; see core/runfiles/__init__.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from gpu_tui.core.runfiles.tfevents import parse_event_file_name

if TYPE_CHECKING:
    from gpu_tui.core.runfiles.tfevents import EventFileName

__all__ = [
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_DIR_ENTRIES",
    "EVENTS",
    "TRAINER_STATE_FILE",
    "CSV_FILE",
    "MLFLOW_DB",
    "MLFLOW_FILE",
    "Found",
    "Writer",
    "kind_of",
    "skip_dir",
    "source_of",
    "owns_event_file",
]

MAX_DEPTH = 8
"""Directory levels below a root: `mlruns/<exp>/<run>/metrics/<key with a />` is 5 or more."""
MAX_ENTRIES = 20000
"""Directory entries looked at per catch-up, every root together."""
MAX_DIR_ENTRIES = 2000
"""Entries looked at in one directory; a directory with more is data: not entered below."""
SLACK_S = 2
"""Clocks in names are whole seconds: a file started in the job's first second is the job's."""

EVENTS, TRAINER_STATE_FILE, CSV_FILE = "tensorboard", "trainer_state", "csv"
MLFLOW_FILE, MLFLOW_DB = "mlflow", "mlflow.db"
"""Kinds of file, each a stream of points of its own in the series file; a stream's source is
its name up to the first dot (`source_of`): the two MLflow stores are both `mlflow`."""

_SKIP = frozenset(
    (
        "__pycache__",
        "node_modules",
        "site-packages",
        "dist-packages",
        "miniconda3",
        "anaconda3",
        "miniforge3",
        "mambaforge",
        "conda",
        "envs",
        "pkgs",
        "venv",
        "data",
        "dataset",
        "datasets",
        "wandb",
        "artifacts",
        "lost+found",
        "proc",
        "sys",
        "dev",
    )
)


class Found(NamedTuple):
    """What a file is: its kind, and for an MLflow file-store metric its key (else "")."""

    kind: str
    key: str


class Writer(NamedTuple):
    """A running process as /proc says it: started (epoch seconds), session, process group,
    and its ancestors' pids (nearest first)."""

    started: float
    session: int
    group: int
    ancestors: tuple[int, ...]


def source_of(stream: str) -> str:
    """`mlflow.db` -> `mlflow`: what `metrics --json` says a stream's series came from."""
    return stream.split(".", 1)[0]


def skip_dir(name: str) -> bool:
    """A directory the walk leaves out: hidden (`.git`, `.cache`, `.venv`, gpu-tui's own state),
    an environment or package store, a dataset, wandb's own files, MLflow's artifacts."""
    return name.startswith(".") or name.lower() in _SKIP


def kind_of(parts: tuple[str, ...]) -> Found | None:
    """`parts`: a file's path components below a walked root."""
    if not parts:
        return None
    name = parts[-1]
    if name.startswith("events.out.tfevents."):
        return Found(EVENTS, "") if parse_event_file_name(name) is not None else None
    if name == "trainer_state.json":
        return Found(TRAINER_STATE_FILE, "")
    if name == "metrics.csv":
        return Found(CSV_FILE, "")
    if name == "mlflow.db":
        return Found(MLFLOW_DB, "")
    for i in range(len(parts) - 5, -1, -1):
        if parts[i] == "mlruns" and parts[i + 3] == "metrics":
            return Found(MLFLOW_FILE, "/".join(parts[i + 4 :]))
    return None


def owns_event_file(
    name: EventFileName,
    *,
    host: str,
    job_pid: int | None,
    writer: Writer | None,
    started_at: float | None,
    finished_at: float | None,
) -> bool:
    """Whether the event file named `name` is the job's (see the module docstring). `host`:
    this machine's name; `writer`: the process `name.pid` as it runs now, or None (none)."""
    if name.host == host and job_pid and writer is not None and writer.started <= name.time + SLACK_S:
        return name.pid == job_pid or job_pid in (writer.session, writer.group) or job_pid in writer.ancestors
    # the writer is gone, or its pid is another process now, or it ran on another host
    if started_at is not None and name.time < started_at - SLACK_S:
        return False
    return finished_at is None or name.time <= finished_at + SLACK_S
