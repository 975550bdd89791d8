"""Every subcommand's --help in Chinese: each option's help, each description and epilog is
translated (no English sentence left), names stay as they are, and the lines fit 80 cells."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.cells import cell_len

from gpu_tui.cli import build_parser
from gpu_tui.config.language import apply_language

CJK = re.compile(r"[\u3400-\u9fff]")
NAME_WORD = re.compile(r"-{1,2}[\w-]+|[A-Z][A-Z0-9_=.]*|\S*[/~$]\S*")
"""An option, a metavar or a path: a help made only of these has nothing to translate."""


def _names_only(text: str) -> bool:
    return all(NAME_WORD.fullmatch(word) for word in text.split())


def test_a_help_sentence_is_not_taken_for_names() -> None:
    assert not _names_only("disarm") and not _names_only("do not ask")
    assert _names_only("--all NAME ~/.ssh/config")


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _parsers(sub, (*path, name))


def _texts(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> dict[str, str]:
    """Every text of one (sub)parser a person reads, by a key that is the same in both languages."""
    for word in path:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[word]
    texts = {"description": parser.description or "", "epilog": parser.epilog or ""}
    for action in parser._actions:
        if action.help and action.help != argparse.SUPPRESS:
            texts["/".join(action.option_strings) or action.dest] = action.help
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                texts[f"command {choice.dest}"] = choice.help or ""
    return {k: v for k, v in texts.items() if v}


def _both() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    en = build_parser()
    apply_language("zh-CN")
    try:
        return en, build_parser()
    finally:
        apply_language("en")


EN, ZH = _both()
PATHS = list(_parsers(EN))


def test_every_subcommand_is_covered() -> None:
    names = {p[0] for p in PATHS if p}
    assert {"status", "add", "run", "sync", "autostop", "conda"} <= names and ("conda", "install") in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "gpu-tui")
def test_every_help_text_is_chinese(path: tuple[str, ...]) -> None:
    en, zh = _texts(EN, path), _texts(ZH, path)
    assert en.keys() == zh.keys()
    left = {k: zh[k] for k in en if not _names_only(en[k]) and (zh[k] == en[k] or not CJK.search(zh[k]))}
    assert not left, f"still English in `gpu-tui {' '.join(path)} --help`: {left}"


def _help(path: tuple[str, ...], language: str, columns: int = 80) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "COLUMNS": str(columns), "GPU_TUI_LANG": language}
    r = subprocess.run(
        [sys.executable, "-m", "gpu_tui", *path, "--help"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize(
    "path",
    [(), ("add",), ("run",), ("sync",), ("autostop",), ("shutdown",), ("conda",)],
    ids=lambda p: " ".join(p) or "gpu-tui",
)
def test_chinese_help_fits_an_80_column_terminal(path: tuple[str, ...]) -> None:
    text = _help(path, "zh-CN")
    assert text.startswith("用法: gpu-tui") and "选项:" in text
    wide = [line for line in text.splitlines() if not line.isascii() and cell_len(line) > 80]
    assert not wide, wide
    # the usage's continuation lines start under what follows the program's name, in cells
    lines = text.splitlines()
    prog = " ".join(("用法: gpu-tui", *path))
    if lines[1]:
        assert len(lines[1]) - len(lines[1].lstrip()) == cell_len(prog) + 1


def test_names_stay_as_they_are() -> None:
    text = _help(("run",), "zh-CN")
    for name in ("--env ENV", "--cwd DIR", "--name JOB", "--setenv K=V", "--tmux", "NAME", "-- CMD..."):
        assert name in text
    assert "运行任务的实例" in text and "显示此帮助并退出" in text


def test_english_help_is_unchanged_by_the_cell_formatter() -> None:
    text = _help((), "en")
    assert text.startswith("usage: gpu-tui [-h]") and "show program's version number and exit" in text
    assert "\n               COMMAND ..." in text  # argparse's own indent under `usage: gpu-tui`
