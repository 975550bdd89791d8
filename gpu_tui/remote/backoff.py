"""Reconnect delays: jittered exponential backoff, so a fleet that lost its link does not retry in step."""

from __future__ import annotations

import random

__all__ = ["backoff_delay"]


def backoff_delay(attempt: int, *, base: float = 1.0, cap: float = 60.0, rng: random.Random | None = None) -> float:
    """Seconds to wait before retry number `attempt` (0-based): half to all of min(cap, base*2^n)."""
    ceiling = min(cap, base * (2.0 ** min(attempt, 30)))
    return ceiling * (rng or random).uniform(0.5, 1.0)
