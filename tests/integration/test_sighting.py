"""Any subcommand that reaches an instance records it in the cost ledger (it bills while up)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sshhelp import run_gpu_tui

from gpu_tui.services.ledger import Ledger

pytestmark = pytest.mark.sshd


def intervals(tmp: Path) -> list:
    path = tmp / "xdg-data" / "gpu-tui" / "ledger.sqlite3"
    if not path.exists():
        return []
    with Ledger(path) as ledger:
        return ledger.intervals()


@pytest.mark.parametrize("args", [["jobs", "{name}"], ["ssh", "{name}", "--", "true"], ["env", "{name}", "--json"]])
def test_subcommands_record_the_instance(sshd_instance, tmp_path: Path, args: list[str]) -> None:
    res = run_gpu_tui(tmp_path, [sshd_instance], *[a.format(name=sshd_instance.name) for a in args])
    assert res.returncode == 0, res.stderr
    (interval,) = intervals(tmp_path)
    assert interval.name == sshd_instance.name and interval.rate == 1.5 and interval.end >= interval.start


def test_an_unreachable_instance_records_nothing(sshd_instance, tmp_path: Path) -> None:
    sshd_instance.stop()
    res = run_gpu_tui(tmp_path, [sshd_instance], "jobs", sshd_instance.name)
    assert res.returncode == 3
    assert intervals(tmp_path) == []
