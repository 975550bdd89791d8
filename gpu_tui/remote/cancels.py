"""Cancels that a library dropped, found and sent again.

Python 3.11's asyncio.wait_for (which asyncssh's connect() and run() use) returns the inner
result when a cancel comes in the same tick as that result (CPython gh-86296, fixed in 3.12).
The cancelled task then carries on: a monitor told to stop reconnects, `gpu-tui forward` keeps
forwarding after Ctrl+C. A task with such a cancel still counts it (`Task.cancelling()`), so
the loops that run until cancelled check at their turns, and a caller waiting for tasks to end
cancels again until they have.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from typing import Any

__all__ = ["cancel_and_wait", "raise_lost_cancel"]


def raise_lost_cancel() -> None:
    """Raise the cancel the current task was sent if something swallowed it. Called where a
    loop that runs until cancelled turns (after a connect, before reporting a state), never in
    clean-up that runs because of a cancel."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def cancel_and_wait(tasks: Iterable[asyncio.Task[Any]], *, every: float = 1.0) -> None:
    """Cancel `tasks` and wait until every one has ended, cancelling again each `every` seconds
    for one that swallowed its cancel; their exceptions are retrieved."""
    wanted = list(tasks)
    pending = set(wanted)
    while pending:
        for t in pending:
            t.cancel()
        _done, pending = await asyncio.wait(pending, timeout=every)
    await asyncio.gather(*wanted, return_exceptions=True)
