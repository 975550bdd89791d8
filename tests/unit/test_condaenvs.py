"""`conda env list` in every shape conda has printed it (tests/data/conda/env-list)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_tui.core.env.condaenvs import CondaEnvEntry, env_names, parse_env_list_json, parse_env_list_text

DATA = Path(__file__).parent.parent / "data" / "conda" / "env-list"

TEXT_CASES = {
    "conda-4.3.30.txt": [
        CondaEnvEntry("base", "/opt/conda", active=True),
        CondaEnvEntry("pytorch", "/opt/conda/envs/pytorch"),
        CondaEnvEntry("tf1.15", "/opt/conda/envs/tf1.15"),
    ],
    "conda-4.12.0.txt": [
        CondaEnvEntry("base", "/root/miniconda3", active=True),
        CondaEnvEntry("detectron2", "/root/miniconda3/envs/detectron2"),
        CondaEnvEntry("py38", "/root/miniconda3/envs/py38"),
        CondaEnvEntry(None, "/root/autodl-tmp/envs/shared"),
    ],
    "conda-24.9.2-not-active.txt": [
        CondaEnvEntry("base", "/root/miniconda3"),
        CondaEnvEntry("llm", "/root/miniconda3/envs/llm"),
        CondaEnvEntry("my-env.v2", "/root/miniconda3/envs/my-env.v2"),
        CondaEnvEntry("llm", "/home/user/.conda/envs/llm"),
    ],
    "conda-25.11.0.txt": [
        CondaEnvEntry("base", "/opt/miniconda3", active=True),
        CondaEnvEntry("frozen-py310", "/opt/miniconda3/envs/frozen-py310", frozen=True),
        CondaEnvEntry("vllm", "/opt/miniconda3/envs/vllm"),
        CondaEnvEntry(None, "/data/envs/unnamed"),
    ],
    "conda-25.9.0-dev.txt": [
        CondaEnvEntry("base", "/root/miniforge3"),
        CondaEnvEntry("train", "/root/miniforge3/envs/train", active=True),
        CondaEnvEntry("locked", "/root/miniforge3/envs/locked", frozen=True),
    ],
}


def test_every_text_capture_has_a_case() -> None:
    assert sorted(p.name for p in DATA.glob("*.txt")) == sorted(TEXT_CASES)


@pytest.mark.parametrize("name", sorted(TEXT_CASES))
def test_text_forms(name: str) -> None:
    text = (DATA / name).read_text(encoding="utf-8")
    assert parse_env_list_text(text) == TEXT_CASES[name]
    assert parse_env_list_json(text) is None


@pytest.mark.parametrize(
    ("name", "prefixes"),
    [
        ("conda-24.9.2.json", ["/root/miniconda3", "/root/miniconda3/envs/llm", "/root/miniconda3/envs/py311"]),
        ("conda-25.11.0.json", ["/opt/miniconda3", "/opt/miniconda3/envs/frozen-py310", "/opt/miniconda3/envs/vllm"]),
    ],
)
def test_json_forms(name: str, prefixes: list[str]) -> None:
    assert parse_env_list_json((DATA / name).read_text(encoding="utf-8")) == prefixes


@pytest.mark.parametrize("text", ["", "null", "[]", '{"envs": 3}', "CondaError: bad", '{"error": "x"}'])
def test_json_that_is_not_an_env_list(text: str) -> None:
    assert parse_env_list_json(text) is None


def test_names_follow_conda_n() -> None:
    text = (DATA / "conda-24.9.2-not-active.txt").read_text()
    prefixes = [e.prefix for e in parse_env_list_text(text)]
    assert env_names(prefixes, "/root/miniconda3/") == {
        "base": "/root/miniconda3",
        "llm": "/root/miniconda3/envs/llm",  # the first envs dir wins, as with `conda -n llm`
        "my-env.v2": "/root/miniconda3/envs/my-env.v2",
    }


def test_json_and_text_agree_on_the_fake_condas_shape() -> None:
    json_prefixes = parse_env_list_json((DATA / "conda-25.11.0.json").read_text())
    text_prefixes = [e.prefix for e in parse_env_list_text((DATA / "conda-25.11.0.txt").read_text()) if e.name]
    assert json_prefixes == text_prefixes


@given(st.text())
def test_text_parser_takes_anything(text: str) -> None:
    for entry in parse_env_list_text(text):
        assert entry.prefix.startswith("/")
