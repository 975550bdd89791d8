"""Arguments of `gpu-tui run | jobs | logs | stop` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse

from gpu_tui.core.i18n import _

__all__ = ["add_job_parsers", "JOB_COMMANDS"]

JOB_COMMANDS = ("run", "jobs", "logs", "stop")


def add_job_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = sub.add_parser("run", help=_("start a detached job on an instance; prints its id"))
    run.add_argument("name", metavar="NAME", help=_("the instance to run it on"))
    run.add_argument("--env", metavar="ENV", help=_("a conda env on the instance (no `conda activate` needed)"))
    run.add_argument("--cwd", metavar="DIR", help=_("working directory (default: the instance's workdir, else home)"))
    run.add_argument("--name", dest="job_name", metavar="JOB", help=_("a name to refer to the job by"))
    run.add_argument(
        "--setenv", action="append", default=[], metavar="K=V", help=_("environment variable (repeatable)")
    )
    run.add_argument(
        "--gpus",
        type=int,
        metavar="N",
        help=_("GPUs for the job: SLURM's --gpus on a cluster, else CUDA_VISIBLE_DEVICES set to the N least-used GPUs"),
    )
    run.add_argument("--partition", metavar="P", help=_('SLURM partition (scheduler = "slurm" instances)'))
    run.add_argument("--time", metavar="T", help=_('SLURM time limit, e.g. 04:00:00 (scheduler = "slurm" instances)'))
    run.add_argument("--tmux", action="store_true", help=_("run inside tmux (attach with `tmux attach -t gpu-tui-ID`)"))
    run.add_argument(
        "--metrics",
        action="append",
        default=[],
        metavar="DIR",
        help=_(
            "where the run writes TensorBoard, trainer_state.json, CSV or MLflow files, "
            "if not below its working directory (repeatable)"
        ),
    )
    # the words after `--` are put in args.cmd by cli.parse_args, never parsed as options
    run.set_defaults(cmd=[])
    run.usage = (
        "gpu-tui run NAME [--gpus N] [--partition P] [--time T] [--env ENV] [--cwd DIR] [--name JOB] "
        "[--setenv K=V]... [--metrics DIR]... [--tmux] -- CMD..."
    )

    jobs = sub.add_parser("jobs", help=_("list an instance's jobs"))
    jobs.add_argument("name", metavar="NAME", help=_("the instance"))
    jobs.add_argument("--json", action="store_true", help=_("print JSON (CONTRACTS.md)"))
    jobs.add_argument("--prune", action="store_true", help=_("delete finished jobs' directories (and logs)"))

    logs = sub.add_parser("logs", help=_("show a job's log (progress bars collapsed)"))
    logs.add_argument("name", metavar="NAME", help=_("the instance"))
    logs.add_argument("job", metavar="JOB", help=_("job id, or name (its newest job)"))
    logs.add_argument("-f", "--follow", action="store_true", help=_("keep printing until the job ends"))
    logs.add_argument("-n", type=int, default=20, metavar="N", help=_("lines from the end (default 20; 0 = none)"))

    stop = sub.add_parser("stop", help=_("stop a job: SIGINT, then SIGTERM, then SIGKILL (on SLURM: scancel)"))
    stop.add_argument("name", metavar="NAME", help=_("the instance"))
    stop.add_argument("job", metavar="JOB", help=_("job id, or name (its newest job)"))
