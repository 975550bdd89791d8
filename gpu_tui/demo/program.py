"""`Program`: what a simulated instance answers to one exec request (built by shellsim.plan,
run by server.py). Its own module so the planners (shellsim.py, jobscripts.py) can share it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Program", "Output", "MAX_STDIN"]

Output = str | bytes
"""Text is sent UTF-8 encoded; bytes as they are (a job's log is a byte stream)."""

MAX_STDIN = 4 * 1024 * 1024
"""More stdin than this (gpu-tui sends a few KiB: a job's command, the runner) is refused."""


@dataclass(slots=True)
class Program:
    """The answer to one exec request."""

    stdout: Output = ""
    stderr: Output = ""
    status: int = 0
    interval: float | None = None
    """When set: after `stdout`, write `tick(i)` every `interval` seconds until the channel closes."""
    first_interval: float | None = None
    """The gap between tick 0 and tick 1, when it differs from `interval`."""
    tick: Callable[[int], Output] | None = None
    exit_when: Callable[[], int | None] | None = None
    """When set (with `tick`): asked after each tick; once it gives a status, the stream ends with
    that exit status (a simulated command that runs for a while and exits, like `conda create`).
    Without it a stream runs until the client closes the channel."""
    on_data: Callable[[bytes], Output] | None = None
    """When set: after `stdout`, each piece of stdin the client sends is answered with
    `on_data(piece)` until the client's EOF, which ends the command (exit 0): gpu-tui's watch
    loop, ticked by the client's newlines."""
    on_stdin: Callable[[bytes], Program] | None = None
    """When set: the command reads its stdin to the end first (the client's EOF); the answer is
    then `on_stdin(data)`, and the rest of this Program is ignored."""
