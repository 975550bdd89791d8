"""tqdm's progress bar as the demo's training logs draw it: the fleet's training log
(simulate.TrainingLog) and a gpu-tui job's log (jobs.SimJob) write the same bytes a real
`tqdm(total=N)` with a `loss=` postfix would, so core/trainlog/line reads them as it reads real logs.
"""

from __future__ import annotations

__all__ = ["mmss", "tqdm_redraw"]

_EIGHTHS = " ▏▎▍▌▋▊▉█"  # tqdm's partial cells, in eighths
_WIDTH = 10


def mmss(seconds: float) -> str:
    """tqdm's time: `MM:SS`, `H:MM:SS` from an hour on."""
    s = int(seconds)
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def tqdm_redraw(desc: str, n: int, total: int, *, it_per_s: float, rate: float | None = None, postfix: str = "") -> str:
    """One redraw, `\\r` first: `\\rdesc: 45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s, loss=0.5]`.

    Elapsed and remaining time follow the run's steady `it_per_s`; `rate` is the one shown
    (tqdm's smoothed, noisy estimate; `it_per_s` when None), as tqdm's `1.23s/it` below one
    item a second.
    """
    frac = n / total
    cells = frac * _WIDTH
    full = int(cells)
    bar = "█" * full
    if full < _WIDTH:
        bar += _EIGHTHS[int((cells - full) * 8)] + " " * (_WIDTH - full - 1)
    shown = it_per_s if rate is None else rate
    rate_text = f"{shown:.2f}it/s" if shown >= 1.0 else f"{1.0 / shown:.2f}s/it"
    tail = f", {postfix}" if postfix else ""
    return (
        f"\r{desc}: {int(frac * 100):3d}%|{bar}| {n}/{total} "
        f"[{mmss(n / it_per_s)}<{mmss((total - n) / it_per_s)}, {rate_text}{tail}]"
    )
