"""The host-stats loop on a real sshd and sh: the second sample after 1 s, then the interval."""

from __future__ import annotations

from pathlib import Path

import pytest
from sshhelp import ssh_host, stats_block_times

pytestmark = pytest.mark.sshd


async def test_second_sample_after_one_second_then_the_interval(sshd_instance, tmp_path: Path) -> None:
    host = ssh_host(sshd_instance, tmp_path)
    await host.connect()
    try:
        ends = await stats_block_times(host, 2.5, 3)
        gaps = [b - a for a, b in zip(ends, ends[1:], strict=False)]
        assert 0.8 < gaps[0] < 2.0, ends
        assert gaps[1] > 2.2, ends
    finally:
        await host.close()
