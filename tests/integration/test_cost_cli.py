"""`gpu-tui cost` end to end (a ledger written through the API, then the real command in a clean
environment), and `gpu-tui status` filling the ledger from a real sshd fleet."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

from sshhelp import run_gpu_tui

from gpu_tui.services.ledger import Ledger

TZ = "CST-8"  # POSIX: UTC+8 without DST, needs no tz database
CST = timezone(timedelta(hours=8))
NOON = datetime(2025, 3, 12, 12, 0, tzinfo=CST).timestamp()


def ledger_path(tmp: Path) -> Path:
    return tmp / "xdg-data" / "gpu-tui" / "ledger.sqlite3"


def run_cost(tmp: Path, *args: str, config: str = "") -> subprocess.CompletedProcess[str]:
    cfg = tmp / "config.toml"
    default = '[settings]\ncurrency = "¥"\n\n[[instances]]\nname = "kept"\nhost = "10.0.0.1"\nhourly_rate = 1.98\n'
    cfg.write_text(config or default)
    (tmp / "home").mkdir(exist_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp / "home"),
        "TZ": TZ,
        "XDG_DATA_HOME": str(tmp / "xdg-data"),
        "XDG_STATE_HOME": str(tmp / "xdg-state"),
        "XDG_CONFIG_HOME": str(tmp / "xdg-config"),
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    return subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(cfg), "cost", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def fill(tmp: Path) -> None:
    with Ledger(ledger_path(tmp)) as ledger:
        # "kept": 10.5 h at 1.98, 22:30 on 03-11 .. 09:00 on 03-12 (1.5 h of it on 03-11)
        ledger.observe("kept", 10.5 * 3600, 1.98, NOON - 3 * 3600)
        # "removed" is no longer in the config: 2 h at 3.00 on 03-10
        ledger.observe("removed", 2 * 3600, 3.0, NOON - 2 * 86400)


def test_cost_json_is_the_contract_shape_with_cents_and_removed_instances(tmp_path: Path) -> None:
    fill(tmp_path)
    res = run_cost(tmp_path, "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc == {  # `totals` and each instance's `currency` were added with per-currency money
        "currency": "¥",
        "total": 26.79,
        "totals": {"¥": 26.79},
        "instances": [
            {"name": "kept", "hours": 10.5, "cost": 20.79, "currency": "¥"},
            {"name": "removed", "hours": 2.0, "cost": 6.0, "currency": "¥"},
        ],
    }


def test_since_counts_only_time_after_that_local_midnight(tmp_path: Path) -> None:
    fill(tmp_path)
    doc = json.loads(run_cost(tmp_path, "--json", "--since", "2025-03-12").stdout)
    assert doc["instances"] == [{"name": "kept", "hours": 9.0, "cost": 17.82, "currency": "¥"}]  # no "removed"
    assert doc["total"] == 17.82
    doc = json.loads(run_cost(tmp_path, "--json", "--since", "2025-03-13").stdout)
    assert doc["total"] == 0.0 and doc["instances"] == []


def test_text_output_is_a_table_and_a_total(tmp_path: Path) -> None:
    fill(tmp_path)
    res = run_cost(tmp_path)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert lines[0] == "all time"
    assert lines[1].split() == ["NAME", "HOURS", "COST"]
    assert lines[2].split() == ["kept", "10.50", "¥20.79"]
    assert lines[3].split() == ["removed", "2.00", "¥6.00"]
    assert lines[4].split() == ["TOTAL", "12.50", "¥26.79"]
    since = run_cost(tmp_path, "--since", "2025-03-12").stdout
    assert since.startswith("since 2025-03-12\n") and "¥17.82" in since


MIXED = (
    '[settings]\ncurrency = "¥"\n\n'
    '[[instances]]\nname = "autodl-4090"\nhost = "10.0.0.1"\nhourly_rate = 1.98\n\n'
    '[[instances]]\nname = "runpod-a40"\nhost = "10.0.0.2"\nhourly_rate = 0.69\ncurrency = "$"\n'
)


def fill_mixed(tmp: Path) -> None:
    """An AutoDL box in yuan and a RunPod pod in dollars, 4 h each, written as the dashboard does."""
    with Ledger(ledger_path(tmp)) as ledger:
        ledger.observe("autodl-4090", 4 * 3600, 1.98, NOON)  # settings' currency: stored without one
        ledger.observe("runpod-a40", 4 * 3600, 0.69, NOON, "$")


def test_two_currencies_are_totalled_apart_never_summed(tmp_path: Path) -> None:
    fill_mixed(tmp_path)
    doc = json.loads(run_cost(tmp_path, "--json", config=MIXED).stdout)
    assert doc["currency"] == "¥"
    assert doc["total"] == 7.92  # `total` stays settings.currency's: 4 h x ¥1.98, no dollars in it
    assert doc["totals"] == {"¥": 7.92, "$": 2.76}
    assert doc["instances"] == [
        {"name": "autodl-4090", "hours": 4.0, "cost": 7.92, "currency": "¥"},
        {"name": "runpod-a40", "hours": 4.0, "cost": 2.76, "currency": "$"},
    ]
    lines = run_cost(tmp_path, config=MIXED).stdout.splitlines()
    assert lines[2].split() == ["autodl-4090", "4.00", "¥7.92"]
    assert lines[3].split() == ["runpod-a40", "4.00", "$2.76"]
    assert lines[4].split() == ["TOTAL", "8.00", "¥7.92", "+", "$2.76"]
    assert "10.68" not in "\n".join(lines)  # ¥7.92 + $2.76 added up would be a lie
    assert len({len(line) for line in lines[1:]}) == 1  # the two-currency TOTAL cell sized its column


def test_a_dollar_settings_file_counts_yuan_apart(tmp_path: Path) -> None:
    """Whatever settings.currency is, `total` is the money in it; an interval recorded without a
    currency follows settings.currency (as every interval of an older ledger does)."""
    with Ledger(ledger_path(tmp_path)) as ledger:
        ledger.observe("autodl-4090", 3600, 1.98, NOON, "¥")
        ledger.observe("runpod-a40", 3600, 0.69, NOON)
    config = '[settings]\ncurrency = "$"\n\n[[instances]]\nname = "runpod-a40"\nhost = "10.0.0.2"\nhourly_rate = 0.69\n'
    doc = json.loads(run_cost(tmp_path, "--json", config=config).stdout)
    assert doc["currency"] == "$" and doc["total"] == 0.69
    assert doc["totals"] == {"$": 0.69, "¥": 1.98}  # settings' currency first


def test_a_bad_date_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for bad in ("2025-13-01", "yesterday", "20250301", "2025-02-30"):
        res = run_cost(tmp_path, "--since", bad)
        assert res.returncode == 2 and res.stdout == ""
        assert res.stderr.count("\n") == 1 and "YYYY-MM-DD" in res.stderr and repr(bad) in res.stderr


def test_no_ledger_yet_is_empty_and_creates_nothing(tmp_path: Path) -> None:
    res = run_cost(tmp_path, "--json")
    assert res.returncode == 0
    assert json.loads(res.stdout) == {"currency": "¥", "total": 0.0, "totals": {"¥": 0.0}, "instances": []}
    assert "nothing recorded" in run_cost(tmp_path).stdout
    assert not ledger_path(tmp_path).exists()


def test_a_corrupt_ledger_is_one_line_and_exit_3(tmp_path: Path) -> None:
    ledger_path(tmp_path).parent.mkdir(parents=True)
    ledger_path(tmp_path).write_bytes(b"garbage" * 1000)
    res = run_cost(tmp_path, "--json")
    assert res.returncode == 3 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("gpu-tui: ledger: cannot read")


# ------------------------------------------------------------------------------ status fills it


def test_status_records_every_reachable_instance_even_with_unreadable_gpus(sshd_factory, tmp_path: Path) -> None:
    good, broken, dead = sshd_factory("good"), sshd_factory("broken", mode="driver_failed"), sshd_factory("dead")
    dead.stop()
    first = run_gpu_tui(tmp_path, [good, broken, dead], "status", "--json", connect_timeout=2.0)
    assert first.returncode == 3  # broken and dead are named
    second = run_gpu_tui(tmp_path, [good, broken, dead], "status", "--json", connect_timeout=2.0)
    up = {i["name"]: i["uptime_seconds"] for i in json.loads(second.stdout)["instances"]}
    assert up["good"] and up["broken"] and up["dead"] is None
    with Ledger(tmp_path / "xdg-data" / "gpu-tui" / "ledger.sqlite3") as ledger:
        ivs = ledger.intervals()
        assert sorted(iv.name for iv in ivs) == ["broken", "good"]  # one interval each: the same boot twice
        for iv in ivs:
            assert iv.rate == 1.5 and abs(iv.seconds - up[iv.name]) <= 90
    res = run_gpu_tui(tmp_path, [good, broken, dead], "cost", "--json")
    doc = json.loads(res.stdout)
    assert [i["name"] for i in doc["instances"]] == ["broken", "good"]
    for inst in doc["instances"]:
        assert abs(inst["hours"] - up[inst["name"]] / 3600) <= 0.03
