"""Text sparklines on a FIXED scale: 95% and 5% must never look the same (Textual's Sparkline autoscales)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["sparkline", "BLOCKS"]

BLOCKS = " ▁▂▃▄▅▆▇█"


def sparkline(values: Iterable[float | int | None], *, low: float, high: float, width: int) -> str:
    """The last `width` values as block characters scaled low..high; unknown values are `·`."""
    if width <= 0:
        return ""
    vals: Sequence[float | int | None] = list(values)[-width:]
    span = (high - low) or 1.0
    out = []
    for v in vals:
        if v is None:
            out.append("·")
            continue
        frac = min(1.0, max(0.0, (float(v) - low) / span))
        # any non-zero value gets at least the lowest bar, so 1% is not drawn as nothing
        idx = 0 if frac <= 0 else max(1, round(frac * (len(BLOCKS) - 1)))
        out.append(BLOCKS[idx])
    return " " * (width - len(out)) + "".join(out)
