"""Any string reaches the remote shell as one literal word (checked through a real /bin/sh)."""

from __future__ import annotations

import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tui.remote.quoting import command_line, join, quote, remote_path, sh_c

words = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=40)


def _sh(cmd: str) -> bytes:
    return subprocess.run(["/bin/sh", "-c", cmd], capture_output=True, check=True, timeout=10).stdout


@settings(max_examples=200, deadline=None)
@given(words)
def test_any_word_round_trips_through_sh(word: str) -> None:
    assert _sh("printf %s " + quote(word)) == word.encode("utf-8", "surrogateescape")


@settings(max_examples=100, deadline=None)
@given(st.lists(words, min_size=1, max_size=5))
def test_join_keeps_word_boundaries(argv: list[str]) -> None:
    out = _sh("printf '%s\\0' " + join(argv))
    assert out.split(b"\0")[:-1] == [w.encode() for w in argv]


@settings(max_examples=100, deadline=None)
@given(words)
def test_sh_c_runs_script_literally(word: str) -> None:
    assert _sh(sh_c("printf %s " + quote(word))) == word.encode()


def test_command_line_single_word_is_shell_syntax_several_are_literal() -> None:
    assert _sh(command_line(["echo a | tr a b"])) == b"b\n"
    assert _sh(command_line(["echo", "a | tr a b", "$(id)", "`x`", "a;b"])) == b"a | tr a b $(id) `x` a;b\n"
    with pytest.raises(ValueError):
        command_line([])


def test_nul_is_refused() -> None:
    with pytest.raises(ValueError):
        quote("a\x00b")


def test_remote_path_expands_home_only_at_start() -> None:
    home = _sh('printf %s "$HOME"').decode()
    assert _sh("printf %s " + remote_path("~/a b/$x")).decode() == f"{home}/a b/$x"
    assert _sh("printf %s " + remote_path("~")).decode() == home
    assert _sh("printf %s " + remote_path("/x/~/y")).decode() == "/x/~/y"
