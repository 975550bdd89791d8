"""A job's directory on the instance and the `command.sh` written into it: what every scheduler
shares (gpu-tui's own runner and SLURM run the same `command.sh` in the same directory)."""

from __future__ import annotations

from gpu_tui.config.settings import InstanceConfig
from gpu_tui.core.errors import InputError
from gpu_tui.core.i18n import _
from gpu_tui.core.jobs import JOB_ID_RE, JobRequest
from gpu_tui.remote.quoting import quote, remote_path
from gpu_tui.services.statedir import shell_state_dir

__all__ = ["job_dir", "command_script"]


def job_dir(inst: InstanceConfig, job_id: str) -> str:
    if not JOB_ID_RE.match(job_id):
        raise InputError(_("{job!r} is not a job id").format(job=job_id))
    return f"{shell_state_dir(inst)}/jobs/{job_id}"


def command_script(req: JobRequest) -> str:
    """`command.sh`: the prelude gpu-tui owns, then the user's command line exactly as typed."""
    lines = [
        f"# gpu-tui job {req.id}: generated; the last part is the command as typed",
        "GPU_TUI_JOB_DIR=$(pwd); GPU_TUI_JOB_ID=" + quote(req.id) + "; export GPU_TUI_JOB_DIR GPU_TUI_JOB_ID",
        # this shell leads the job's process group (setsid); in tmux the pane's shell does
        "[ -f want_tmux ] || echo $$ > pid",
        # for tmux mode, where tee hides the status (the runner reads this file then)
        "trap 'echo $? > \"$GPU_TUI_JOB_DIR/exit_code.job\"' EXIT",
        # python writing to a file buffers a whole block; the log tail should show lines as printed
        'export PYTHONUNBUFFERED="${PYTHONUNBUFFERED:-1}"',
    ]
    # the runner starts in the job's directory; a job without a cwd runs in the home directory, as
    # an SSH command would
    where = remote_path(req.cwd or "~")
    lines.append(f"cd -- {where} || {{ echo 'gpu-tui: cannot cd to the working directory' >&2; exit 126; }}")
    # where the run's own metrics files are looked for (services/jobs/series/runfiles.py)
    lines.append('pwd > "$GPU_TUI_JOB_DIR/workdir" 2>/dev/null')
    for key, value in req.setenv:
        lines.append(f"export {key}={quote(value)}")
    if req.conda_prefix:
        # what `conda activate` does for PATH, without needing `conda init` (FIELD_NOTES.md)
        p = quote(req.conda_prefix)
        lines.append(f'export PATH={p}/bin:"$PATH" CONDA_PREFIX={p} CONDA_DEFAULT_ENV={quote(req.conda_env or "")}')
    lines.append(req.command)
    return "\n".join(lines) + "\n"
