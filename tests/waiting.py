"""The one polling helper of the test suite: wait for a condition, fail saying what was awaited.

    await until(pred, timeout=30.0, what=None, step=0.05, pause=asyncio.sleep, detail=None)
    until_sync(pred, timeout=30.0, what=None, step=0.1, detail=None)
    await wait_for(pilot, pred, timeout=30.0, what=None, step=0.1)

Each polls `pred()` until it returns something truthy and returns that value (`until` also takes
a coroutine function: `pred()` is awaited). Past `timeout`
(wall-clock seconds) it fails with an AssertionError naming the condition (`what`, else the
source text of the lambda), how long it waited and the last value seen, plus `detail()` when
given. `wait_for` is `until` driven by a Textual Pilot: it pauses through the pilot (the app
handles its pending messages and repaints between polls) and adds the app's screen and its
instances' states to the message.

Generous timeouts are fine: a condition that holds returns at once, and the suite runs on
loaded 2-core machines. Wait for the state a test checks, never a fixed sleep before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import linecache
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

__all__ = ["describe", "until", "until_sync", "wait_for"]

T = TypeVar("T")


def describe(pred: Callable[..., Any]) -> str:
    """A condition's own words: the source of a lambda's body, else the function's name."""
    code = getattr(pred, "__code__", None)
    name = getattr(pred, "__qualname__", None) or repr(pred)
    if code is None or code.co_name != "<lambda>":
        return name
    # code positions (3.11+) span the lambda's body exactly, even on a line holding other code
    spans = [p for p in code.co_positions() if None not in p and p[2:] != (0, 0)]
    if not spans:
        return name
    start = min((p[0], p[2]) for p in spans)
    end = max((p[1], p[3]) for p in spans)
    lines = [linecache.getline(code.co_filename, n) for n in range(start[0], end[0] + 1)]
    if not all(lines):
        return name
    lines[-1] = lines[-1][: end[1]]
    lines[0] = lines[0][start[1] :]
    return " ".join(line.strip() for line in lines)


def _failure(
    pred: Callable[[], Any],
    what: str | None,
    timeout: float,
    started: float,
    last: Any,
    detail: Callable[[], str] | None,
) -> AssertionError:
    msg = f"timed out after {time.monotonic() - started:.1f} s (timeout {timeout:g} s) waiting for: "
    msg += what or describe(pred)
    msg += f"\n  last value: {last!r}"[:500]
    if detail is not None:
        try:
            msg += f"\n  {detail()}"
        except Exception as exc:  # noqa: BLE001 - the timeout is the failure to report
            msg += f"\n  (detail failed: {exc!r})"
    return AssertionError(msg)


async def until(
    pred: Callable[[], T | Awaitable[T]],
    timeout: float = 30.0,
    *,
    what: str | None = None,
    step: float = 0.05,
    pause: Callable[[float], Awaitable[object]] = asyncio.sleep,
    detail: Callable[[], str] | None = None,
) -> T:
    """Poll `pred` every `step` s (through `pause`) until truthy; return its value."""
    __tracebackhide__ = True  # a failure points at the test's line, not at this loop
    started = time.monotonic()
    while True:
        value = pred()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if time.monotonic() - started > timeout:
            raise _failure(pred, what, timeout, started, value, detail)
        await pause(step)


def until_sync(
    pred: Callable[[], T],
    timeout: float = 30.0,
    *,
    what: str | None = None,
    step: float = 0.1,
    detail: Callable[[], str] | None = None,
) -> T:
    """`until` for code without an event loop (subprocesses, files): sleeps between polls."""
    __tracebackhide__ = True
    started = time.monotonic()
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() - started > timeout:
            raise _failure(pred, what, timeout, started, value, detail)
        time.sleep(step)


def app_state(app: Any) -> str:
    """The screen on top and each instance's state, for a failure message."""
    parts = [f"screen: {type(app.screen).__name__}"]
    fleet = getattr(app, "fleet", None)
    if fleet is not None:
        views = fleet.views.values()
        parts.append(
            "instances: "
            + ", ".join(f"{v.name}={v.shown_state}" + (f" ({v.message})" if v.message else "") for v in views)
        )
    return "; ".join(parts)


async def wait_for(
    pilot: Any,
    pred: Callable[[], T],
    timeout: float = 30.0,
    *,
    what: str | None = None,
    step: float = 0.1,
    explain: Callable[[], str] | None = None,
) -> T:
    """`until` through a Textual Pilot: the app settles between polls; the failure names its
    state, and what `explain` says then (the text the test was reading)."""
    __tracebackhide__ = True

    def detail() -> str:
        said = ""
        if explain is not None:
            try:
                said = "\n  " + explain()
            except Exception as exc:  # noqa: BLE001 - the timeout is the failure to report
                said = f"\n  (explain failed: {exc!r})"
        with contextlib.suppress(Exception):
            return app_state(pilot.app) + said
        return "app: not running" + said

    return await until(pred, timeout, what=what, step=step, pause=pilot.pause, detail=detail)  # type: ignore[return-value]
