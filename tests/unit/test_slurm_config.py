"""`scheduler = "slurm"` and `slurm = {...}` in a config entry: accepted, or one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_tui.config.settings import load_settings
from gpu_tui.core.errors import ConfigError

ENTRY = '[[instances]]\nname = "lab"\nhost = "login.example.edu"\nscheduler = "slurm"\n'


def load(tmp_path: Path, extra: str):
    path = tmp_path / "config.toml"
    path.write_text(ENTRY + extra, encoding="utf-8")
    return load_settings(path, must_exist=True)


def test_defaults_are_read(tmp_path: Path) -> None:
    s = load(tmp_path, 'slurm = { partition = "gpu", time = "1-00:00:00", gpus = 2, extra = ["--qos=normal"] }\n')
    inst = s.instance("lab")
    assert inst.scheduler == "slurm"
    assert (inst.slurm.partition, inst.slurm.time, inst.slurm.gpus, inst.slurm.extra) == (
        "gpu",
        "1-00:00:00",
        2,
        ("--qos=normal",),
    )


@pytest.mark.parametrize(
    "extra, field",
    [
        ('slurm = { time = "four hours" }\n', "time"),
        ('slurm = { extra = ["--qos normal; rm -rf ~"] }\n', "extra"),
        ("slurm = { gpus = -1 }\n", "gpus"),
        ('slurm = { partiton = "gpu" }\n', "partiton"),
    ],
)
def test_bad_defaults_name_the_field(tmp_path: Path, extra: str, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        load(tmp_path, extra)
    assert field in err.value.message and "config.toml" in err.value.message


def test_unknown_scheduler(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(ENTRY.replace('"slurm"', '"pbs"'), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_settings(path, must_exist=True)
    assert "scheduler" in err.value.message
