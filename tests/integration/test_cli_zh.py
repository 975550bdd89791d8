"""The CLI in Chinese end to end (`--lang zh-CN`, GPU_TUI_LANG): the status table aligned in
terminal cells, error lines with their exit codes, the shutdown report, and JSON that is the
same bytes in both languages."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

from rich.cells import cell_len
from sshhelp import cli_env, config_text, run_gpu_tui

from gpu_tui.config.language import catalog

ZH = catalog("zh-CN")
HEADER = ["名称", "状态", "GPU数", "利用率", "显存 GiB", "已运行", "每小时", "已花费"]


def zh(tmp: Path, instances: list[object], *args: str, **kw) -> subprocess.CompletedProcess[str]:
    return run_gpu_tui(tmp, instances, "--lang", "zh-CN", *args, **kw)


def column_starts(line: str) -> list[int]:
    """The cell where each column of a table line starts (columns are two spaces or more apart)."""
    starts, cells, spaces = [], 0, 2
    for ch in line:
        if ch == " ":
            spaces += 1
        else:
            if spaces >= 2:
                starts.append(cells)
            spaces = 0
        cells += cell_len(ch)
    return starts


def test_status_table_is_aligned_in_cells(sshd_factory, tmp_path: Path) -> None:
    fleet = [sshd_factory("h100", capture="h100-80gb"), sshd_factory("l40s", capture="l40s", gpus=8)]
    dead = sshd_factory("dead")
    dead.stop()
    res = zh(tmp_path, [*fleet, dead], "status", connect_timeout=2.0)
    assert res.returncode == 3, res.stderr
    lines = res.stdout.splitlines()
    rows = [line for line in lines if not line.startswith("  ")]  # each GPU's detail line is indented
    assert re.split(r"\s{2,}", rows[0]) == HEADER
    assert [r.split()[0] for r in rows[1:]] == ["h100", "l40s", "dead"]
    assert "在线" in rows[1] and "在线" in rows[2] and ZH.gettext("unreachable") in rows[3]
    starts = column_starts(rows[0])
    for row in rows[1:3]:
        assert column_starts(row) == starts, (rows[0], row)
    assert column_starts(rows[3])[:2] == starts[:2]  # the dead one: name and state, then dashes
    assert any("利用率" in line and "MiB" in line for line in lines if line.startswith("  ["))
    assert "gpu-tui: dead: " in res.stderr


def test_error_lines_in_chinese_exit_2(tmp_path: Path) -> None:
    refused = ZH.gettext("refused")
    res = zh(tmp_path, [], "shutdown", "--all", "gpu")
    assert res.returncode == 2 and res.stderr == f"gpu-tui: {refused}: shutdown: 给出实例名或 --all, 不能同时给\n"
    res = zh(tmp_path, [], "cost", "--since", "2025-13-45")
    assert res.returncode == 2 and res.stderr.startswith("gpu-tui: --since 需要 YYYY-MM-DD 格式的日期")
    res = zh(tmp_path, [], "status", "--bogus")
    assert res.returncode == 2 and res.stderr.startswith("用法: gpu-tui")
    assert res.stderr.endswith("gpu-tui: 错误: 无法识别的参数: --bogus\n")
    res = zh(tmp_path, [], "status")
    assert res.returncode == 2 and "里没有配置实例" in res.stderr and "Traceback" not in res.stderr


def test_the_language_comes_from_the_environment_too(tmp_path: Path) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text(config_text([]))
    env = {**cli_env(tmp_path), "GPU_TUI_LANG": "zh-CN"}
    res = subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(cfg), "cost"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0 and res.stdout.startswith("累计: 没有记录"), res.stdout


def test_shutdown_report_in_chinese(sshd_factory, tmp_path: Path) -> None:
    up, down = sshd_factory("up"), sshd_factory("down")
    down.stop()
    res = zh(tmp_path, [up, down], "shutdown", "--all", "--yes")
    assert res.returncode == 3, res.stderr
    assert re.fullmatch(r"up    已关机\(已确认, 用时 [0-9.]+ 秒\)\n", res.stdout), res.stdout
    assert "down  " in res.stderr and res.stderr.endswith("gpu-tui: 没有关机: down; 它们可能仍在计费\n")


_TIMES = re.compile(r'"(uptime_seconds|cost_so_far)": [0-9.]+')


def test_json_is_the_same_in_both_languages(sshd_instance, tmp_path: Path) -> None:
    name = sshd_instance.name
    started = run_gpu_tui(tmp_path, [sshd_instance], "run", name, "--name", "hi", "--", "echo hi")
    assert started.returncode == 0, started.stderr
    end = time.monotonic() + 30
    while '"succeeded"' not in run_gpu_tui(tmp_path, [sshd_instance], "jobs", name, "--json").stdout:
        assert time.monotonic() < end
        time.sleep(0.3)
    for args in (("status", "--json"), ("jobs", name, "--json"), ("cost", "--json")):
        en = run_gpu_tui(tmp_path, [sshd_instance], "--lang", "en", *args)
        zh_ = zh(tmp_path, [sshd_instance], *args)
        assert en.returncode == zh_.returncode == 0, (args, en.stderr, zh_.stderr)
        assert _TIMES.sub(r'"\1": T', en.stdout) == _TIMES.sub(r'"\1": T', zh_.stdout), args
        assert not re.search(r"[\u4e00-\u9fff]", zh_.stdout), args
        json.loads(zh_.stdout)
    table = zh(tmp_path, [sshd_instance], "jobs", name)
    assert table.stdout.split("\n")[0].split() == ["ID", "名称", "状态", "进度", "loss", "日志", "命令"]
    assert "已完成" in table.stdout
