"""Mirror settings for conda and pip: the edits keep the rest of each file; which index is in use."""

from __future__ import annotations

from gpu_tui.core.env.mirrors import (
    DEFAULT_CONDA,
    DEFAULT_PIP,
    MIRRORS,
    conda_channel_url,
    condarc_with,
    condarc_without,
    parse_probe_lines,
    pip_conf_with,
    pip_conf_without,
    pip_index_url,
    probe_path,
)

CONDARC = """# mine
auto_activate_base: false
channels:
- https://example.org/conda/main
- defaults
envs_dirs:
  - /root/autodl-tmp/envs
show_channel_urls: false
"""


def test_condarc_gets_the_mirrors_documented_block_and_keeps_other_keys() -> None:
    text = condarc_with(CONDARC, MIRRORS["tuna"])
    assert "auto_activate_base: false" in text and "  - /root/autodl-tmp/envs" in text and "# mine" in text
    assert "example.org" not in text and "show_channel_urls: false" not in text
    assert "channels:\n  - defaults\nshow_channel_urls: true\ndefault_channels:\n" in text
    assert "  - https://mirrors.tuna.tsinghua.edu.cn/anaconda/pkgs/main\n" in text
    assert "  conda-forge: https://mirrors.tuna.tsinghua.edu.cn/anaconda/cloud\n" in text
    # switching mirrors replaces, never piles up
    other = condarc_with(text, MIRRORS["ustc"])
    assert "tuna" not in other
    assert other.count("channels:") == 3  # channels, default_channels, custom_channels
    assert condarc_without(other) == "# mine\nauto_activate_base: false\nenvs_dirs:\n  - /root/autodl-tmp/envs\n"
    assert condarc_with("", MIRRORS["bfsu"]).startswith("channels:\n")


def test_which_channel_conda_asks() -> None:
    assert conda_channel_url([]) == DEFAULT_CONDA
    assert conda_channel_url([CONDARC]) == "https://example.org/conda/main"
    for name, m in MIRRORS.items():
        assert conda_channel_url([condarc_with(CONDARC, m)]) == f"{m.anaconda}/pkgs/main", name
    assert conda_channel_url(["channels: [conda-forge]\n"]) == "https://conda.anaconda.org/conda-forge"
    assert (
        conda_channel_url(["channels:\n  - conda-forge\ncustom_channels:\n  conda-forge: https://m/cloud\n"])
        == "https://m/cloud/conda-forge"
    )
    # the user's file wins over the root one
    assert conda_channel_url(["", "default_channels:\n  - http://root/main\n"]) == "http://root/main"
    assert (
        conda_channel_url(["default_channels: ['http://u/main']\n", "default_channels: [http://r]"]) == "http://u/main"
    )


PIP = """# pip settings
[global]
timeout = 60
index-url = https://old.example/simple

[install]
trusted-host = old.example
"""


def test_pip_conf_changes_one_line() -> None:
    text = pip_conf_with(PIP, MIRRORS["aliyun"].pypi)
    assert "index-url = https://mirrors.aliyun.com/pypi/simple/" in text
    assert "old.example/simple" not in text and "timeout = 60" in text and "trusted-host = old.example" in text
    assert pip_index_url([text]) == "https://mirrors.aliyun.com/pypi/simple/"
    assert pip_conf_with("", "https://x/simple") == "[global]\nindex-url = https://x/simple\n"
    assert pip_conf_without("[global]\nindex-url = https://x/simple\n") == ""
    assert "[install]" in pip_conf_without(PIP) and "index-url" not in pip_conf_without(PIP)


def test_which_index_pip_uses() -> None:
    assert pip_index_url([]) == DEFAULT_PIP
    assert pip_index_url(["[global]\nindex-url = http://a\n", "[global]\nindex-url = http://b\n"]) == "http://b"
    assert pip_index_url(["[global]\nindex-url = http://a\n"], "http://env") == "http://env"
    assert pip_index_url(["not an ini [", "[install]\nindex_url=http://i\n"]) == "http://i"


def test_probe_paths_and_answers() -> None:
    assert probe_path("conda", "https://m/pkgs/main/") == "https://m/pkgs/main/noarch/repodata.json"
    assert probe_path("pip", "https://m/simple") == "https://m/simple/pip/"
    rows = parse_probe_lines(
        '{"url": "http://a", "status": 200, "ms": 12, "error": null}\n'
        '{"url": "http://b", "status": null, "ms": 4000, "error": "URLError: timed out"}\n'
        "@@curl http://c 404 0.250\n@@curl http://d 000 4.001\nnoise\n"
    )
    assert [(r.url, r.status, r.ms, r.answers) for r in rows] == [
        ("http://a", 200, 12, True),
        ("http://b", None, 4000, False),
        ("http://c", 404, 250, False),
        ("http://d", None, None, False),
    ]
    assert rows[1].error == "URLError: timed out"
