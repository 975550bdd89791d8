"""Arguments of `gpu-tui run | jobs | logs | stop` (kept apart so building the parser stays cheap)."""

from __future__ import annotations

import argparse

__all__ = ["add_job_parsers", "JOB_COMMANDS"]

JOB_COMMANDS = ("run", "jobs", "logs", "stop")


def add_job_parsers(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    run = sub.add_parser("run", help="start a detached job on an instance; prints its id")
    run.add_argument("name", metavar="NAME")
    run.add_argument("--env", metavar="ENV", help="a conda env on the instance (no `conda activate` needed)")
    run.add_argument("--cwd", metavar="DIR", help="working directory (default: the instance's workdir, else home)")
    run.add_argument("--name", dest="job_name", metavar="JOB", help="a name to refer to the job by")
    run.add_argument("--setenv", action="append", default=[], metavar="K=V", help="environment variable (repeatable)")
    run.add_argument("--tmux", action="store_true", help="run inside tmux (attach with `tmux attach -t gpu-tui-ID`)")
    # the words after `--` are put in args.cmd by cli.parse_args, never parsed as options
    run.set_defaults(cmd=[])
    run.usage = "gpu-tui run NAME [--env ENV] [--cwd DIR] [--name JOB] [--setenv K=V]... [--tmux] -- CMD..."

    jobs = sub.add_parser("jobs", help="list an instance's jobs")
    jobs.add_argument("name", metavar="NAME")
    jobs.add_argument("--json", action="store_true", help="print JSON (CONTRACTS.md)")
    jobs.add_argument("--prune", action="store_true", help="delete finished jobs' directories (and logs)")

    logs = sub.add_parser("logs", help="show a job's log (progress bars collapsed)")
    logs.add_argument("name", metavar="NAME")
    logs.add_argument("job", metavar="JOB", help="job id, or name (its newest job)")
    logs.add_argument("-f", "--follow", action="store_true", help="keep printing until the job ends")
    logs.add_argument("-n", type=int, default=20, metavar="N", help="lines from the end (default 20; 0 = none)")

    stop = sub.add_parser("stop", help="stop a job: SIGINT, then SIGTERM, then SIGKILL")
    stop.add_argument("name", metavar="NAME")
    stop.add_argument("job", metavar="JOB")
