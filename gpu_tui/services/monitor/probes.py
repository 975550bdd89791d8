"""The command lines gpu-tui runs on an instance to read GPUs, processes and host stats.

Built once per host and kept running: one `nvidia-smi -lms` stream, and one shell loop that
prints host stats from /proc with builtins (plus compute apps at a slower cadence), rather than a
process per metric per tick.
"""

from __future__ import annotations

from importlib import resources

from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.metrics.holders import HolderScan, parse_scan
from gpu_tui.remote.quoting import join, sh_c

__all__ = [
    "gpu_stream_command",
    "gpu_once_command",
    "gpu_count_command",
    "stats_loop_command",
    "stats_once_command",
    "holders_script",
    "holders_command",
    "holders_answer",
    "APPS_MARK",
    "HOLDERS_MARK",
    "END_MARK",
]

APPS_MARK = "@@apps"
HOLDERS_MARK = "@@holders"
END_MARK = "@@end"

_STATS_BODY = r"""
read -r _ c < /proc/stat && echo "cpu $c"
echo "ncpu $ncpu"
read -r l _ < /proc/loadavg && echo "load $l"
while read -r k v _; do case $k in MemTotal:|MemAvailable:) echo "mem $k $v";; esac; done < /proc/meminfo
read -r u _ < /proc/uptime && read -r p < /proc/1/stat && echo "up $u $tck $p"
df -Pk / 2>/dev/null | { read -r _; read -r _ t used _; echo "disk $t $used"; }
"""

_PRELUDE = r"""
tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
ncpu=$(grep -c '^cpu[0-9]' /proc/stat 2>/dev/null)
"""


def gpu_stream_command(interval_seconds: float, *, legacy: bool = False) -> str:
    """The long-lived metrics stream: nvidia-smi's own loop, one process for the whole session.

    `legacy` drops `mig.mode.current`, which drivers older than R450 refuse.
    """
    ms = max(100, int(round(interval_seconds * 1000)))
    fields = nvsmi.LEGACY_QUERY_FIELDS if legacy else nvsmi.QUERY_FIELDS
    return join(nvsmi.query_gpu_argv(ms, fields=fields)) + " 2>&1"


def gpu_count_command() -> str:
    """One index per GPU (`nvidia-smi --query-gpu=index`), so the stream's first tick can be
    closed as soon as it is complete."""
    return "nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null"


def gpu_once_command(*, legacy: bool = False) -> str:
    fields = nvsmi.LEGACY_QUERY_FIELDS if legacy else nvsmi.QUERY_FIELDS
    return join(nvsmi.query_gpu_argv(None, fields=fields)) + " 2>&1"


def _apps_block() -> str:
    return f"echo {APPS_MARK}; {join(nvsmi.compute_apps_argv())} 2>&1\n"


def stats_loop_command(interval_seconds: float = 5.0, apps_every: int = 2) -> str:
    """Host stats every `interval_seconds` (the second after 1 s), compute apps and who holds the
    GPUs every `apps_every`-th."""
    holders = f"echo {HOLDERS_MARK}; gpu_holders; printf '%s' \"$GH\"\n"
    script = (
        _PRELUDE
        + holders_script()
        + "i=0\nwhile :; do\n"
        + _STATS_BODY
        + f"if [ $((i % {int(apps_every)})) -eq 0 ]; then {_apps_block()}{holders}fi\n"
        + f"echo {END_MARK}\ni=$((i+1))\n"
        # the second sample comes after 1 s: CPU % needs two, and 5 s of "CPU -" looks broken
        + f"if [ $i -gt 1 ]; then sleep {interval_seconds:g}; else sleep {min(1.0, interval_seconds):g}; fi\n"
        + "done\n"
    )
    return sh_c(script)


def holders_script() -> str:
    """holders.sh: defines `gpu_holders STATE`, which sets GH to who holds each GPU's device file."""
    return resources.files("gpu_tui.services.monitor").joinpath("holders.sh").read_text(encoding="utf-8")


def holders_command(state: str | None) -> str:
    """One scan of who holds the GPUs, its lines after HOLDERS_MARK (`state`: the state dir as a
    shell word, for the jobs' names)."""
    return sh_c(holders_script() + f"echo {HOLDERS_MARK}; gpu_holders {state or ''}; printf '%s' \"$GH\"\n")


def stats_once_command(with_apps: bool = True) -> str:
    """One iteration of the stats loop, for `gpu-tui status`."""
    script = _PRELUDE + _STATS_BODY + (_apps_block() if with_apps else "") + f"echo {END_MARK}\n"
    return sh_c(script)


def holders_answer(stdout: str) -> HolderScan | None:
    """holders_command's scan (None where it did not run: no HOLDERS_MARK in the output)."""
    mark = HOLDERS_MARK + "\n"
    at = stdout.find(mark)
    return parse_scan(stdout[at + len(mark) :]) if at >= 0 else None
