"""Host-stats parsing, cost math, backoff, remote-text sanitising and history bounds."""

from __future__ import annotations

import random

from gpu_tui.core.metrics.history import HostHistory
from gpu_tui.core.metrics.hoststats import CpuTimes, parse_probe
from gpu_tui.core.models import GpuFrame, GpuSample
from gpu_tui.core.money.cost import burn_rate, cost_so_far, format_money
from gpu_tui.core.text import printable, strip_ansi
from gpu_tui.remote.backoff import backoff_delay

PID1_STAT = (
    "1 (tini) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 {start} "
    "2412544 1 184467 1 1 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0"
)


def probe(cpu: str, start_ticks: int = 100_000, host_up: str = "5000.50") -> list[str]:
    return [
        f"cpu {cpu}",
        "ncpu 16",
        "load 3.25",
        "mem MemTotal: 65536000 kB",
        "mem MemAvailable: 32768000 kB",
        f"up {host_up} 100 {PID1_STAT.format(start=start_ticks)}",
        "disk 104857600 52428800",
    ]


def test_probe_parses_every_field_and_container_uptime() -> None:
    stats, cpu = parse_probe(probe("100 0 100 800 0 0 0 0 0 0"), 1.0)
    assert cpu == CpuTimes(busy=200, total=1000)
    assert stats.cpu_percent is None  # needs two readings
    assert (stats.cpu_count, stats.load1) == (16, 3.25)
    assert (stats.mem_total_mib, stats.mem_used_mib) == (64000, 32000)
    assert (stats.disk_total_gib, stats.disk_used_gib) == (100.0, 50.0)
    # host up 5000.5 s, PID 1 started 1000 s after host boot -> the container is 4000 s old
    assert stats.uptime_seconds == 4000
    stats2, _ = parse_probe(probe("200 0 200 1400 0 0 0 0 0 0"), 2.0, cpu)
    assert stats2.cpu_percent == 25.0


def test_probe_survives_garbage() -> None:
    stats, cpu = parse_probe(["cpu x y", "up nope", "mem MemTotal: lots", "disk - -", "", "weird line"], 1.0)
    assert cpu is None and stats.uptime_seconds is None and stats.mem_total_mib is None


def test_cost_and_money() -> None:
    assert cost_so_far(1.98, 5400) == 2.97
    assert cost_so_far(1.98, None) is None
    assert burn_rate([1.98, 1.98]) == 3.96
    assert format_money(3.96, "¥") == "¥3.96" and format_money(None, "¥") == "-"


def test_backoff_grows_caps_and_jitters() -> None:
    rng = random.Random(1)
    delays = [backoff_delay(n, rng=rng) for n in range(12)]
    assert all(0.5 <= d <= 1.0 for d in delays[:1])
    assert all(d <= 60.0 for d in delays) and delays[-1] >= 30.0
    assert len({round(backoff_delay(5, rng=rng), 6) for _ in range(20)}) > 1


def test_printable_strips_escapes() -> None:
    evil = "name\x1b[31mred\x1b]0;title\x07\x1b[2J\rX\x00"
    assert printable(evil) == "namered?X?"
    assert strip_ansi("\x1b[1;32mok\x1b[0m") == "ok"


def test_history_is_bounded() -> None:
    h = HostHistory(maxlen=5)
    for t in range(20):
        h.append(GpuFrame(t, (GpuSample(0, "u", "n", t, t * 10, 100),)))
    assert list(h.gpus[0].utilization) == [15, 16, 17, 18, 19]
    assert h.gpus[0].memory_total_mib == 100 and len(h.times) == 5
