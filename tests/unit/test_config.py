"""Config file validation: every mistake is one message naming file, line and field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tui.config.settings import load_settings, parse_settings
from gpu_tui.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]

GOOD = """
[settings]
refresh_seconds = 2.0
currency = "$"

[keys]
shutdown_all = "ctrl+q"

[[instances]]
name = "autodl-4090"
host = "connect.westb.seetacloud.com"
port = 23456
hourly_rate = 1.98
provider = "autodl"
sync = { local = "~/code/proj", remote = "proj", exclude = [".git"] }

[[instances]]
name = "lab.box_2"
host = "10.0.0.5"
"""


def test_valid_config_loads_with_defaults() -> None:
    s = parse_settings(GOOD)
    assert s.settings.refresh_seconds == 2.0 and s.settings.currency == "$"
    assert [i.name for i in s.instances] == ["autodl-4090", "lab.box_2"]
    lab = s.instance("lab.box_2")
    assert (lab.port, lab.user, lab.provider, lab.state_dir) == (22, "root", "generic", "~/.gpu-tui")
    assert s.instances[0].sync.exclude == (".git",)
    assert s.keys == {"shutdown_all": "ctrl+q"}


def test_example_config_is_valid() -> None:
    s = load_settings(ROOT / "config.example.toml", must_exist=True)
    assert s.instances, "config.example.toml should show at least one instance"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[settings]\nrefresh_secnds = 2\n", ["cfg.toml:2:", "refresh_secnds", "did you mean 'refresh_seconds'"]),
        ('[[instances]]\nname = "a"\nhots = "x"\n', ["cfg.toml:3:", "unknown key 'hots'", "did you mean 'host'"]),
        ('[[instances]]\nname = "a"\nhost = "h"\nport = 70000\n', ["cfg.toml:4:", "port", "65535"]),
        ('[[instances]]\nname = "a"\nhost = "h"\nport = "ssh"\n', ["cfg.toml:4:", "port", "integer"]),
        ('[[instances]]\nname = "my box"\nhost = "h"\n', ["cfg.toml:2:", "name", "letters, digits"]),
        ('[[instances]]\nname = "a;rm"\nhost = "h"\n', ["cfg.toml:2:", "name"]),
        (
            '[[instances]]\nname = "a"\nhost = "h"\n\n[[instances]]\nname = "a"\nhost = "h2"\n',
            ["cfg.toml:6:", "duplicate instance name 'a'"],
        ),
        (
            '[[instances]]\nname = "a"\nhost = "h"\nsync = { exlude = [] }\n',
            ["cfg.toml:4:", "sync.exlude", "did you mean 'exclude'"],
        ),
        ('[[instances]]\nname = "a"\nhost = "h"\npassword = "hunter22"\n', ["cfg.toml:4:", "never kept in the config"]),
        ('[keys]\nquit = "x"\nshutdown_al = "ctrl+q"\n', ["cfg.toml:3:", "shutdown_al", "did you mean 'shutdown_all'"]),
        ("[settings\n", ["cfg.toml:1:", "not valid TOML"]),
        ('[[instances]]\nname = "a"\n', ["cfg.toml:1:", "host", "missing"]),
        ('[[instances]]\nname = "a"\nhost = "h"\nprovider = "aws"\n', ["cfg.toml:4:", "provider"]),
        ("[settings]\nrefresh_seconds = 0.01\n", ["cfg.toml:2:", "refresh_seconds"]),
    ],
)
def test_bad_config_names_file_line_and_field(text: str, expected: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(text, "cfg.toml")
    msg = str(info.value)
    for part in expected:
        assert part in msg, msg
    assert "hunter22" not in msg
    assert "\n" not in msg


def test_missing_default_file_means_no_instances(tmp_path: Path) -> None:
    assert load_settings(tmp_path / "nope.toml").instances == ()
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.toml", must_exist=True)


def test_unknown_instance_name_suggests(tmp_path: Path) -> None:
    s = parse_settings(GOOD)
    with pytest.raises(ConfigError, match="did you mean 'autodl-4090'"):
        s.instance("autodl-409")


def _cli(*args: str, env_extra: dict[str, str] | None = None, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {"HOME": str(tmp), "PATH": "/usr/bin:/bin", "XDG_CONFIG_HOME": str(tmp / "cfg"), **(env_extra or {})}
    return subprocess.run([sys.executable, "-m", "gpu_tui", *args], capture_output=True, text=True, env=env, timeout=60)


def test_cli_bad_config_exits_2_without_traceback(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[[instances]]\nname = "a"\nhost = "h"\nport = 0\n')
    res = _cli("--config", str(cfg), "status", tmp=tmp_path)
    assert res.returncode == 2
    assert f"{cfg}:4:" in res.stderr and "port" in res.stderr
    assert "Traceback" not in res.stderr + res.stdout


def test_cli_env_config_and_missing_file(tmp_path: Path) -> None:
    res = _cli("status", env_extra={"GPU_TUI_CONFIG": str(tmp_path / "missing.toml")}, tmp=tmp_path)
    assert res.returncode == 2 and "missing.toml" in res.stderr and "not found" in res.stderr


def test_cli_unknown_instance_exits_2(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(GOOD)
    res = _cli("--config", str(cfg), "status", "autodl-409", tmp=tmp_path)
    assert res.returncode == 2 and "did you mean 'autodl-4090'" in res.stderr


def test_cli_usage_error_exits_2(tmp_path: Path) -> None:
    res = _cli("status", "--jsn", tmp=tmp_path)
    assert res.returncode == 2 and "Traceback" not in res.stderr
