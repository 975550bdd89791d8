"""The environment check's package-index part: the probe's config sections read, the checks built."""

from __future__ import annotations

from gpu_tui.core.env.check import build_checks, env_json, parse_probe
from gpu_tui.core.env.mirrors import IndexAnswer, conda_channel_url, pip_index_url
from gpu_tui.core.units import format_latency_ms

PROBE = """@@section conda
/root/miniconda3/bin/conda
conda 24.9.2
@@section condarc_user
channels:
  - defaults
default_channels:
  - https://mirrors.bfsu.edu.cn/anaconda/pkgs/main
@@section condarc_root
@@section pipconf
[global]
index-url = https://etc.example/simple
@@section pipconf
@@section pipconf
@@section pipconf
[global]
index-url = https://user.example/simple
@@section pip_env

"""


def test_the_probe_sections_say_which_index_is_in_use() -> None:
    f = parse_probe(PROBE)
    assert len(f.pip_conf_texts) == 4 and f.pip_env_index is None
    assert pip_index_url(f.pip_conf_texts, f.pip_env_index) == "https://user.example/simple"
    assert conda_channel_url(f.condarc_texts) == "https://mirrors.bfsu.edu.cn/anaconda/pkgs/main"


def test_index_checks_and_json() -> None:
    f = parse_probe(PROBE)
    f.indexes = [
        IndexAnswer("https://a/noarch/repodata.json", 200, 85, tool="conda"),
        IndexAnswer("https://b/pip/", None, None, "URLError: timed out", tool="pip"),
    ]
    checks = {c.name: c for c in build_checks(f)}
    assert checks["conda index"].ok and "85 ms" in checks["conda index"].detail
    assert not checks["pip index"].ok and "timed out" in checks["pip index"].detail
    assert "mirror tuna" in (checks["pip index"].fix or "")
    doc = env_json(f, list(checks.values()))
    assert doc["indexes"] == [
        {
            "tool": "conda",
            "url": "https://a/noarch/repodata.json",
            "answers": True,
            "status": 200,
            "ms": 85,
            "error": None,
        },
        {
            "tool": "pip",
            "url": "https://b/pip/",
            "answers": False,
            "status": None,
            "ms": None,
            "error": "URLError: timed out",
        },
    ]


def test_latency_format() -> None:
    assert format_latency_ms(None) == "-" and format_latency_ms(0.4) == "0 ms"
    assert format_latency_ms(85.2) == "85 ms" and format_latency_ms(1234) == "1.2 s"
