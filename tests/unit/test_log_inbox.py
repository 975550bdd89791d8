"""LogInbox: the log screen's follow worker puts every update in; the painter takes them 4 times
a second as one (all new lines, the last `keep`; the newest live rows and numbers)."""

from __future__ import annotations

from gpu_tui.services.jobs.follow import LogInbox, LogUpdate


def update(lines: tuple[str, ...], live: tuple[str, ...], loss: float | None, read: int) -> LogUpdate:
    return LogUpdate(
        lines=lines,
        live=live,
        progress=None,
        last_loss=loss,
        metrics={},
        failure=None,
        loss_points=(),
        loss_axis=None,
        log_bytes=read,
        lines_seen=read,
    )


def test_updates_between_two_takes_come_as_one() -> None:
    inbox = LogInbox(keep=100)
    assert inbox.take() is None
    inbox.put(update(("a", "b"), ("bar 10%",), 0.9, 2))
    inbox.put(update((), ("bar 20%",), 0.8, 2))
    inbox.put(update(("c",), ("bar 30%",), None, 3))
    got = inbox.take()
    assert got is not None
    assert got.lines == ("a", "b", "c") and got.live == ("bar 30%",)
    assert got.last_loss is None and got.log_bytes == 3  # the newest update's, not a merge
    assert inbox.take() is None  # taken once


def test_a_burst_keeps_only_the_lines_the_painter_shows() -> None:
    inbox = LogInbox(keep=3)
    inbox.put(update(tuple(f"line {i}" for i in range(1, 6)), (), None, 5))
    inbox.put(update(("line 6",), (), None, 6))
    got = inbox.take()
    assert got is not None and got.lines == ("line 4", "line 5", "line 6") and got.lines_seen == 6
