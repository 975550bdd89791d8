"""core.autostop: the watchdog's log lines and the status probe's output -> what the dashboard shows."""

from __future__ import annotations

import calendar
import time

from gpu_tui.core.autostop import AutostopStatus, parse_line, parse_status

ARMED = (
    "2026-11-30T10:00:00Z armed pid=4242 idle=900s every=15s gpu<5% cpu<0.50 after_job=20261130-095900-ab12 "
    'before=yes cpu_source=cgroup2 shutdown=if [ "$(id -u)" = 0 ]; then shutdown -h now; fi'
)


def epoch(stamp: str) -> int:
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def probe(
    *lines: str,
    now: str = "2026-11-30T10:20:00Z",
    alive: bool = True,
    armed: str | None = ARMED,
    failed: str | None = None,
) -> str:
    out = [f"now {epoch(now)}", "pid 4242"] + (["alive 1"] if alive else [])
    if armed:
        out.append("@armed " + armed)
    if failed:
        out.append("@failed " + failed)
    out += ["@line " + ln for ln in lines]
    return "\n".join(out) + "\n"


def test_parse_line_kinds_and_other_output() -> None:
    line = parse_line("2026-11-30T10:00:15Z busy 0/900s gpu=87 cpu=0.02 jobs=1 why=GPU 0 at 87%")
    assert line is not None and line.kind == "busy" and line.epoch == epoch("2026-11-30T10:00:15Z")
    assert parse_line("2026-11-30T10:28:41Z failed: the shutdown command exited 1; watching again").kind == "failed"
    others = ("copying results", "Terminated", "", "2026-11-30T10:00:15Z hello world", "2026-13-45T99:00:00Z busy x")
    for other in others:
        assert parse_line(other) is None


def test_idle_counts_down_from_the_last_check() -> None:
    st = parse_status(probe(ARMED, "2026-11-30T10:19:50Z idle 120/900s gpu=0,3 cpu=0.05 jobs=0"))
    assert st.armed and st.state == "idle" and st.pid == 4242
    assert (st.idle_seconds, st.idle_for_seconds) == (900, 120)
    assert st.seconds_left == 900 - 120 - 10  # the line is 10 s old
    assert st.after_job == "20261130-095900-ab12"
    assert st.summary() == "autostop in 12m50s"
    assert st.summary(elapsed=50) == "autostop in 12m"
    assert st.summary(elapsed=10_000) == "autostop in 1s"


def test_busy_with_its_reason() -> None:
    st = parse_status(probe("2026-11-30T10:19:59Z busy 0/900s gpu=87 cpu=1.02 jobs=1 why=1 gpu-tui job(s) running"))
    assert st.state == "busy" and st.reason == "1 gpu-tui job(s) running" and st.seconds_left is None
    assert st.idle_for_seconds == 0 and st.summary() == "autostop armed (busy)"


def test_just_armed_and_stopping() -> None:
    assert parse_status(probe(ARMED)).state == "watching"
    assert parse_status(probe(ARMED)).summary() == "autostop armed"
    for line in (
        "firing 900/900s gpu=0 cpu=0.01 jobs=0",
        "before running (at most 600s)",
        "copying",
        "before exit 0",
        "shutdown /usr/bin/shutdown",
        "shutdown exit 0, waiting for the power-off",
    ):
        text = line if line == "copying" else "2026-11-30T10:19:59Z " + line
        st = parse_status(probe("2026-11-30T10:19:58Z firing 900/900s gpu=0 cpu=0.01 jobs=0", text))
        assert st.state == "stopping" and st.summary() == "autostop: shutting down", line


def test_a_failed_shutdown_is_remembered_while_watching_again() -> None:
    failed = "2026-11-30T10:19:00Z failed: the shutdown command exited 1; watching again"
    st = parse_status(probe(failed))
    assert st.state == "failed" and st.summary() == "autostop: shutdown failed"
    st = parse_status(probe(failed, "2026-11-30T10:19:50Z idle 10/900s gpu=0 cpu=0.00 jobs=0", failed=failed))
    assert st.state == "idle" and st.failure == "the shutdown command exited 1; watching again"
    assert st.summary().endswith("(last shutdown failed)")
    older = "2026-11-30T09:00:00Z failed: the shutdown command exited 1; watching again"
    assert parse_status(probe(ARMED, failed=older)).failure is None  # before this arming


def test_not_armed() -> None:
    st = parse_status(probe("2026-11-30T10:19:00Z cancelled", alive=False))
    assert st == AutostopStatus(
        armed=False,
        state="off",
        idle_seconds=900,
        after_job="20261130-095900-ab12",
        last_line="2026-11-30T10:19:00Z cancelled",
    )
    assert st.summary() == ""
    for junk in ("", "garbage\n", "now x\npid y\nalive 1\n", "sh: 1: cannot open\n"):
        st = parse_status(junk)
        assert st.state in ("off", "watching") and st.seconds_left is None
    assert not parse_status("").armed
