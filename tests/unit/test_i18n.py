"""The translation layer: which language is chosen, and that the catalogs are complete and current."""

from __future__ import annotations

import gettext
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tui.config.language import LOCALE_DIR, apply_language, catalog, resolve_language
from gpu_tui.core import i18n
from gpu_tui.core.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import i18n as i18n_script  # noqa: E402  (scripts/i18n.py)


@pytest.mark.parametrize(
    ("value", "language"),
    [
        ("zh_CN.UTF-8", "zh-CN"),
        ("zh_CN", "zh-CN"),
        ("zh", "zh-CN"),
        ("zh-CN", "zh-CN"),
        ("zh_CN.GB18030", "zh-CN"),
        ("zh_Hans_CN", "zh-CN"),
        ("en_US.UTF-8", "en"),
        ("en", "en"),
        ("C", "en"),
        ("POSIX", "en"),
        ("C.UTF-8", "en"),
        ("fr_FR.UTF-8", None),
        ("zh_TW.UTF-8", None),
        ("", None),
    ],
)
def test_values_are_read_not_looked_up_in_installed_locales(value: str, language: str | None) -> None:
    assert i18n.normalise_language(value) == language


def test_locale_variables_in_the_c_librarys_order() -> None:
    assert i18n.language_from_locale({"LANG": "zh_CN.UTF-8"}) == "zh-CN"
    assert i18n.language_from_locale({"LC_ALL": "en_US.UTF-8", "LANG": "zh_CN.UTF-8"}) == "en"
    assert i18n.language_from_locale({"LC_MESSAGES": "zh_CN", "LANG": "en_US"}) == "zh-CN"
    assert i18n.language_from_locale({"LANG": "de_DE.UTF-8"}) == "en"  # not spoken: English
    assert i18n.language_from_locale({}) == "en"


def test_option_beats_env_beats_config_beats_locale() -> None:
    env = {"LANG": "zh_CN.UTF-8"}
    assert resolve_language(None, env, "auto") == "zh-CN"
    assert resolve_language(None, env, "en") == "en"
    assert resolve_language(None, {**env, "GPU_TUI_LANG": "en"}, "zh-CN") == "en"
    assert resolve_language("zh-CN", {"GPU_TUI_LANG": "en"}, "en") == "zh-CN"
    assert resolve_language("auto", {"GPU_TUI_LANG": "auto", "LANG": "zh_CN"}, "auto") == "zh-CN"


@pytest.mark.parametrize(
    ("option", "env", "where"), [("fr", {}, "--lang"), (None, {"GPU_TUI_LANG": "klingon"}, "GPU_TUI_LANG")]
)
def test_an_unknown_value_names_itself_and_the_choices(option: str | None, env: dict[str, str], where: str) -> None:
    with pytest.raises(ConfigError, match=rf"{where}: unknown language .*choose one of auto, en, zh-CN"):
        resolve_language(option, env, "auto")


def test_cli_refuses_an_unknown_language_with_exit_2(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GPU_TUI_LANG": "xx"}
    r = subprocess.run([sys.executable, "-m", "gpu_tui", "cost"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "GPU_TUI_LANG: unknown language 'xx'" in r.stderr and "Traceback" not in r.stderr


def test_help_speaks_chinese_from_the_locale_alone(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "zh_CN.UTF-8"}
    r = subprocess.run([sys.executable, "-m", "gpu_tui", "--help"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.startswith("用法: gpu-tui") and "选项" in r.stdout
    r = subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--lang", "en", "--help"], env=env, capture_output=True, text=True, timeout=60
    )
    assert r.stdout.startswith("usage: gpu-tui")


def test_switching_installs_and_restores() -> None:
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        assert i18n.active_language() == "zh-CN" and i18n._("options") == "选项"
    assert i18n.active_language() == "en" and i18n._("options") == "options"
    try:
        apply_language("zh-CN")
        import argparse

        assert argparse._("usage: ") == "用法: "  # type: ignore[attr-defined]
    finally:
        apply_language("en")


def test_every_message_is_translated_with_the_same_placeholders() -> None:
    problems = i18n_script.problems(i18n_script.updated("zh_CN", i18n_script.extract()))
    assert not problems, "\n".join(problems[:40]) + "\n(add them to i18n/zh_CN/*.json, run scripts/i18n.py)"


def test_compiled_catalog_is_current_and_ships_in_the_package() -> None:
    assert i18n_script.main(["--check"]) == 0, "run: .venv/bin/python scripts/i18n.py"
    mo = LOCALE_DIR / "zh_CN" / "LC_MESSAGES" / "gpu_tui.mo"
    assert mo.is_file() and isinstance(catalog("zh-CN"), gettext.GNUTranslations)
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"locale/*/LC_MESSAGES/*.mo"' in pyproject  # package data: a wheel carries it


def test_placeholders_are_found_in_both_styles() -> None:
    assert i18n_script.placeholders("{a} and {b!r} {c:.1f} %s %(prog)s 100%% {{x}}") == [
        "%(prog)s",
        "%s",
        "{a}",
        "{b!r}",
        "{c:.1f}",
    ]
