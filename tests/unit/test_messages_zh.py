"""The sentences below the UI in Chinese: config errors, error titles, connection errors, the
environment check, dates. JSON keeps English (CONTRACTS.md); English stays the default."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpu_tui.config.language import catalog
from gpu_tui.config.settings import load_settings, parse_settings
from gpu_tui.core import i18n
from gpu_tui.core.env.check import EnvFacts, PyModule, build_checks, env_json
from gpu_tui.core.errors import (
    AuthFailed,
    CommandTimeout,
    ConfigError,
    ConnectionLost,
    GpuTuiError,
    HostKeyChanged,
    HostKeyUnknown,
    InputError,
    Unreachable,
)
from gpu_tui.core.logincmd import parse_login
from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.units import format_ago_s, format_eta_s, format_local_datetime, format_rate_per_hour
from gpu_tui.remote.hostkeys import KnownHosts
from gpu_tui.remote.ssh import SshHost, SshTarget
from gpu_tui.services.status import sample_host

DEC_1 = datetime(2026, 12, 1, 14, 5, tzinfo=UTC).timestamp()


@pytest.fixture
def zh() -> Iterator[None]:
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        yield


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _host(tmp_path: Path, port: int) -> SshHost:
    known = KnownHosts(tmp_path / "user_known_hosts", tmp_path / "known_hosts")
    return SshHost(SshTarget("gpu", "127.0.0.1", port), known_hosts=known, connect_timeout=5)


def test_a_bad_config_file_is_chinese_with_file_line_and_field_kept(tmp_path: Path, zh: None) -> None:
    path = tmp_path / "config.toml"
    path.write_text('[settings]\ncurrency = "¥"\n\n[[instances]]\nname = "gpu"\nhost = "h"\nprot = 2222\n')
    with pytest.raises(ConfigError) as info:
        load_settings(path)
    assert info.value.message == f"{path}:7: instances[0] ('gpu').prot: 未知的配置项 'prot' (是不是 'port'?)"
    assert info.value.line().startswith("配置错误: ")
    with pytest.raises(ConfigError, match=r"cfg\.toml:2: settings\.refresh_seconds: 应大于或等于 0\.25 \(实际为 0\.1"):
        parse_settings("[settings]\nrefresh_seconds = 0.1\n", "cfg.toml")
    with pytest.raises(ConfigError, match=r"cfg\.toml:3: instances\[0\] \('a'\)\.provider: 应为以下之一: 'autodl', "):
        parse_settings('[[instances]]\nname = "a"\nprovider = "aws"\nhost = "h"\n', "cfg.toml")


def test_config_errors_stay_english_by_default(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cfg\.toml:2: settings\.refresh_seconds: Input should be greater than"):
        parse_settings("[settings]\nrefresh_seconds = 0.1\n", "cfg.toml")
    with pytest.raises(ConfigError, match=r"unknown key 'prot' \(did you mean 'port'\?\)"):
        parse_settings('[[instances]]\nname = "a"\nhost = "h"\nprot = 1\n', "cfg.toml")


def test_error_titles_are_translated_where_shown_and_stay_english_in_code(zh: None) -> None:
    shown = {
        cls: cls("x").shown_title
        for cls in (ConfigError, InputError, Unreachable, ConnectionLost, CommandTimeout, AuthFailed)
    }
    assert shown == {
        ConfigError: "配置错误",
        InputError: "已拒绝",
        Unreachable: "无法连接",
        ConnectionLost: "离线",
        CommandTimeout: "超时",
        AuthFailed: "登录失败",
    }
    assert HostKeyChanged("x", "SHA256:a").line() == "主机密钥已变: x"
    assert HostKeyUnknown("x", "SHA256:a").line() == "未知主机密钥: x"
    assert AuthFailed.title == "auth failed" and GpuTuiError("x").line() == "错误: x"  # compared by code in English


def test_an_unreachable_host_says_so_in_chinese_and_json_keeps_english(tmp_path: Path, zh: None) -> None:
    port = _closed_port()
    with pytest.raises(Unreachable) as info:
        asyncio.run(_host(tmp_path, port).connect())
    assert info.value.line() == f"无法连接: 127.0.0.1:{port}: 连接被拒绝 (实例在运行吗? 端口对吗?)"
    assert info.value.english == f"127.0.0.1:{port}: connection refused (is the instance running? is the port right?)"
    st = asyncio.run(sample_host(_host(tmp_path, port), 1.98))
    assert not st.online and st.error_title == "unreachable" and "连接被拒绝" in (st.error or "")
    assert st.as_json()["error"] == info.value.english


def test_the_env_checks_fixes_are_chinese_and_env_json_english(zh: None) -> None:
    f = EnvFacts(
        nvsmi_text="sh: 1: nvidia-smi: not found",
        nvsmi_rc=127,
        mem_total_gib=64.0,
        mem_available_gib=0.5,
        python_checked="python3",
        torch=PyModule(version="2.4.1+cpu", cuda_available=False),
    )
    c = {check.name: check for check in build_checks(f)}
    assert c["nvidia-smi"].detail == "没有 GPU: 找不到 nvidia-smi" and "无卡模式" in (c["nvidia-smi"].fix or "")
    assert c["python"].fix == "安装 python3, 或使用 conda 环境(--env)"
    assert c["conda"].fix == "安装 Miniconda, 或用 python3 和 pip"
    assert c["torch"].detail == "2.4.1+cpu 是 CPU 版本 (python3)" and "重新安装" in (c["torch"].fix or "")
    assert c["memory"].detail == "可用 0.5 / 64 GiB" and c["memory"].fix == "内存被占用了: 看看进程, 或停止一个任务"
    checks = env_json(f, list(c.values()))["checks"]
    assert isinstance(checks, list)
    doc = {d["name"]: d for d in checks}
    assert doc["nvidia-smi"] == {
        "name": "nvidia-smi",
        "ok": False,
        "detail": "no GPU: nvidia-smi not found",
        "fix": "is this instance running with a GPU (not in no-GPU mode)? if it is, the "
        "driver failed: restart the instance or ask the provider",
    }
    assert doc["torch"]["detail"] == "2.4.1+cpu is the CPU build (python3)"
    assert doc["memory"]["detail"] == "0.5 of 64 GiB available"


def test_gpu_errors_are_read_in_chinese_and_kept_in_english(zh: None) -> None:
    e = nvsmi.detect_error("Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.", 15)
    assert e is not None and e.reason == "GPU 丢失: GPU 0000:3B:00.0 丢失, 重启以恢复"
    assert e.reason_en == "GPU lost: GPU 0000:3B:00.0 is lost, reboot to recover it"


def test_dates_and_times_read_naturally_in_chinese(zh: None) -> None:
    assert format_local_datetime(DEC_1, UTC) == "12月1日 14:05"
    assert format_eta_s(725, DEC_1, UTC) == "剩余 12m05s → 14:17 完成"
    assert format_ago_s(185) == "3m05s前" and format_ago_s(0) == "刚刚"
    assert format_rate_per_hour(1.98, "¥") == "¥1.98/时"


def test_dates_in_english_do_not_follow_the_c_locale() -> None:
    assert format_local_datetime(DEC_1, UTC) == "Tue 2026-12-01 14:05"
    assert format_eta_s(725, DEC_1, UTC) == "ETA 12m05s → done 14:17"


def test_a_pasted_login_that_is_not_one_is_explained_in_chinese(zh: None) -> None:
    with pytest.raises(InputError) as info:
        parse_login("ssh -p abc root@host")
    assert (
        info.value.message == "登录命令: 端口 'abc' (在 -p 后) 不是数字; SSH 端口请写数字, "
        "例如 `ssh -p 23456 root@connect.westb.seetacloud.com`"
    )


def test_refusals_before_anything_runs_are_chinese(zh: None) -> None:
    from gpu_tui.core.autostop import AutostopStatus
    from gpu_tui.core.jobs import JobRequest
    from gpu_tui.core.syncplan import SyncSummary, summary_line
    from gpu_tui.services.jobs.runner import validate_request
    from gpu_tui.services.sync.run import check_direction

    with pytest.raises(InputError, match="^命令是空的: 请在 `--` 后面写要运行的命令$"):
        validate_request(JobRequest(id="20261201-140500-a1b2", command=" "))
    with pytest.raises(InputError, match="^方向必须是 push 或 pull, 收到 'up'$"):
        check_direction("up")
    done = SyncSummary("push", "rsync", "/p", "/root/p", 3, 1258291, 4.21, skipped_links=1)
    assert (
        summary_line(done, "gpu") == "已上传 /p -> gpu:/root/p: 3 个文件, 1.2 MiB, 用时 4.2 秒 (rsync); "
        "跳过了 1 个符号链接 (SFTP 只复制文件)"
    )
    assert AutostopStatus(armed=True, state="idle", seconds_left=750).summary() == "12m30s 后自动关机"
