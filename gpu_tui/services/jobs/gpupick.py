"""`run --gpus N` on an instance without a scheduler: the job sees the N least-used GPUs through
CUDA_VISIBLE_DEVICES (what a user sharing a multi-GPU box would pick by hand from nvidia-smi)."""

from __future__ import annotations

from gpu_tui.core.errors import InputError, RemoteError
from gpu_tui.core.i18n import _, ngettext
from gpu_tui.remote.host import Host

__all__ = ["least_used", "gpus_env"]

QUERY = "nvidia-smi --query-gpu=index,memory.used,utilization.gpu --format=csv,noheader,nounits"


def least_used(csv_text: str, n: int) -> list[int] | None:
    """The indexes of the `n` GPUs with the least memory in use (then utilisation, then index), in
    index order; None when fewer than `n` GPUs are listed."""
    gpus: list[tuple[float, float, int]] = []
    for line in csv_text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        gpus.append((_number(cells[1]), _number(cells[2]), int(cells[0])))
    if len(gpus) < n:
        return None
    return sorted(index for _mem, _util, index in sorted(gpus)[:n])


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("inf")  # `[N/A]`: a GPU that reports nothing is picked last


async def gpus_env(
    host: Host, instance: str, n: int, setenv: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, str], ...]:
    """`setenv` with CUDA_VISIBLE_DEVICES for `n` GPUs; InputError (exit 2) when it cannot be."""
    if n < 1:
        raise InputError(_("--gpus {n}: give 1 or more").format(n=n))
    if any(key == "CUDA_VISIBLE_DEVICES" for key, _v in setenv):
        raise InputError(_("--gpus and --setenv CUDA_VISIBLE_DEVICES=...: give one of them"))
    res = await host.run(QUERY, timeout=30)
    if not res.ok:
        raise RemoteError(
            _("{name}: nvidia-smi did not answer, so --gpus cannot pick GPUs: {error}").format(
                name=instance, error=(res.stderr or res.stdout).strip()[:200]
            )
        )
    picked = least_used(res.stdout, n)
    if picked is None:
        count = sum(1 for line in res.stdout.splitlines() if line.split(",")[0].strip().isdigit())
        raise InputError(
            ngettext(
                "{name}: --gpus {n}, but it has {count} GPU", "{name}: --gpus {n}, but it has {count} GPUs", count
            ).format(name=instance, n=n, count=count)
        )
    return (*setenv, ("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in picked)))
