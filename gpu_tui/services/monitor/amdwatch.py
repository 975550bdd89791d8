"""AMD GPUs on an instance without nvidia-smi (issue 28): amd-smi where it exists, else rocm-smi.

amd-smi's watch mode (`-w`) is unreliable across releases, so a one-shot command is polled: one
shell on the instance runs `amd-smi metric --json` every `interval` seconds (one process a tick,
not one per GPU), after one `amd-smi static --json` for the cards' names and sizes; rocm-smi the
same way. Each answer ends with a mark line, and is read by core/metrics/amdgpu.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from gpu_tui.core.bilingual import say
from gpu_tui.core.errors import RemoteError
from gpu_tui.core.i18n import N_
from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.metrics.amdgpu import AmdReadError, Statics, parse_amd_smi, parse_amd_static, parse_rocm_smi
from gpu_tui.core.models import GpuError, GpuErrorKind, GpuFrame
from gpu_tui.remote.host import Host
from gpu_tui.remote.quoting import sh_c

__all__ = ["AMD_MARK", "END", "amd_command", "AmdReader", "read_amd_once", "amd_stream"]

log = logging.getLogger(__name__)

AMD_MARK = "@@amd"
END = "@@amdend"
AMD_MIN_SECONDS = 2.0
"""amd-smi is a Python program (a few hundred ms of CPU a call): never more often than this."""

_METRIC = "{ amd-smi metric --usage --power --temperature --mem-usage --json 2>&1 || amd-smi metric --json 2>&1; }"
_ROCM = "rocm-smi --showuse --showmeminfo vram --showpower --showtemp --showproductname --json 2>&1"


def amd_command(interval: float | None) -> str:
    """Which AMD tool answers (`@@amd amd-smi|rocm-smi|none`), then its answers, each ended by
    END: amd-smi's static once, then its metric every `interval` s (None: once)."""
    again = f"sleep {max(AMD_MIN_SECONDS, interval):g}" if interval is not None else "break"
    return sh_c(
        f"if command -v amd-smi >/dev/null 2>&1; then\n"
        f"  echo '{AMD_MARK} amd-smi'; amd-smi static --json 2>&1; echo {END}\n"
        f"  while :; do {_METRIC}; echo {END}; {again}; done\n"
        f"elif command -v rocm-smi >/dev/null 2>&1; then\n"
        f"  echo '{AMD_MARK} rocm-smi'\n"
        f"  while :; do {_ROCM}; echo {END}; {again}; done\n"
        f"else echo '{AMD_MARK} none'; fi\n"
    )


class AmdReader:
    """Reads amd_command's lines: `tool` once known (`none`: no AMD tool), then a frame or an
    error per answer."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.tool: str | None = None
        self._clock = clock
        self._static: Statics | None = None
        self._block: list[str] = []

    def feed(self, line: str) -> GpuFrame | GpuError | None:
        if self.tool is None:
            if line.startswith(AMD_MARK + " "):
                self.tool = line[len(AMD_MARK) + 1 :].strip()
            return None
        if line != END:
            self._block.append(line)
            return None
        text, self._block = "\n".join(self._block), []
        if self.tool == "amd-smi" and self._static is None:
            self._static = parse_amd_static(text)  # once: the cards do not change
            return None
        try:
            if self.tool == "amd-smi":
                return parse_amd_smi(text, self._static, self._clock())
            return parse_rocm_smi(text, self._clock())
        except AmdReadError:
            first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
            reason = say(N_("{tool} answered no GPUs: {line}"), tool=self.tool, line=first[:200] or "-")
            return nvsmi.gpu_error(GpuErrorKind.NO_GPU, reason, first)


async def read_amd_once(host: Host, *, timeout: float = 30.0) -> GpuFrame | GpuError | None:
    """One reading of an instance's AMD GPUs; None where neither amd-smi nor rocm-smi exists."""
    res = await host.run(amd_command(None), timeout=timeout)
    reader, out = AmdReader(), None
    for line in res.stdout.splitlines():
        got = reader.feed(line)
        if got is not None:
            out = got
    return None if reader.tool in (None, "none") else out


async def amd_stream(host: Host, interval: float, on_reading: Callable[[GpuFrame | GpuError], None]) -> bool:
    """Poll the instance's AMD tool until the channel ends; False at once where there is none."""
    reader = AmdReader()
    try:
        async with host.stream(amd_command(interval)) as lines:
            async for line in lines:
                got = reader.feed(line)
                if reader.tool == "none":
                    return False
                if got is not None:
                    on_reading(got)
    except RemoteError as exc:
        log.info("%s: AMD stream: %s", host.name, exc)
    return reader.tool not in (None, "none")
