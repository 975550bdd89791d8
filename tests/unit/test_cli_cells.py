"""Widths in terminal cells for the CLI (commands/support/cells.py), and the CLI's words in Chinese
that need no instance: yes/no answers, the shutdown report, autostop and sync summaries."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from gpu_tui.commands.autostop_cmd import status_words
from gpu_tui.commands.cost_cmd import format_cost_table
from gpu_tui.commands.shutdown_cmd import report_detail
from gpu_tui.commands.support import cells
from gpu_tui.commands.support.cells import format_rows, pad, truncate, wrap
from gpu_tui.commands.support.output import error_line, is_yes
from gpu_tui.commands.sync_cmd import summary_words
from gpu_tui.config.language import catalog
from gpu_tui.core import i18n
from gpu_tui.core.autostop import AutostopStatus
from gpu_tui.core.errors import InputError
from gpu_tui.core.money.ledgermath import NameTotal
from gpu_tui.core.syncplan import SyncSummary, summary_line
from gpu_tui.services.power import ShutdownResult

SHOWN = st.one_of(
    *(
        st.characters(min_codepoint=a, max_codepoint=b, exclude_categories=("Cc", "Cn"))
        for a, b in (
            (0x20, 0x7E),
            (0xA1, 0xAC),
            (0xAE, 0x24F),
            (0x300, 0x36F),
            (0x2010, 0x2027),
            (0x2190, 0x21FF),
            (0x2500, 0x25FF),
            (0x3000, 0x30FF),
            (0x4E00, 0x9FFF),
            (0xAC00, 0xD7A3),
            (0xFF01, 0xFF60),
        )
    )
)
"""What gpu-tui shows: Latin text, punctuation, arrows and boxes, CJK, kana, Hangul, full-width forms."""


@given(st.text(alphabet=SHOWN, max_size=30))
def test_cells_are_what_rich_measures_for_the_dashboard(text: str) -> None:
    # the CLI measures without Rich (it never loads it); the two agree on the text gpu-tui shows
    assert cells.cell_len(text) == cell_len(text)


MIXED = st.text(alphabet=st.sampled_from(list("ab Z-1.") + list("中文实例关机，。（）")), max_size=40)


@given(MIXED, st.integers(min_value=0, max_value=50), st.booleans())
def test_pad_fills_exactly_the_cells_asked_for(text: str, width: int, right: bool) -> None:
    padded = pad(text, width, right=right)
    assert cell_len(padded) == width
    if cell_len(text) <= width:
        assert padded.strip(" ") == text.strip(" ")


@given(MIXED, st.integers(min_value=0, max_value=50))
def test_truncate_never_exceeds_the_width(text: str, width: int) -> None:
    cut = truncate(text, width)
    assert cell_len(cut) <= width
    if cell_len(text) <= width:
        assert cut == text
    else:
        assert cut.endswith("…") or width == 0 and cut == ""


@given(st.lists(st.tuples(MIXED, MIXED, MIXED), min_size=1, max_size=6))
def test_columns_start_at_the_same_cell_on_every_row(rows: list[tuple[str, str, str]]) -> None:
    clean = [[c.strip() or "-" for c in r] for r in rows]
    widths = [max(cell_len(r[c]) for r in clean) for c in range(3)]
    for row, line in zip(clean, format_rows(clean), strict=True):
        assert line.startswith(pad(row[0], widths[0]) + "  " + pad(row[1], widths[1]) + "  " + row[2])


@given(MIXED, st.integers(min_value=4, max_value=30))
def test_wrap_keeps_every_character_and_fits_where_it_can(text: str, width: int) -> None:
    lines = wrap(text, width)
    assert "".join(lines).replace(" ", "") == "".join(text.split())
    for line in lines:  # wider only where nothing in it may be broken (a long word, `1。。`)
        assert cell_len(line) <= width or len(cells._tokens(line)) == 1


def test_wrap_breaks_between_chinese_characters_but_not_before_punctuation() -> None:
    assert wrap("中文中文中文，中文", 14) == ["中文中文中文，", "中文"]
    assert wrap("中文中文中文，中文", 12) == ["中文中文中", "文，中文"]
    assert wrap("配置文件(默认: $GPU_TUI_CONFIG)", 10) == ["配置文件", "(默认:", "$GPU_TUI_CONFIG)"]


def test_the_english_answers_and_the_chinese_ones_mean_yes() -> None:
    assert all(is_yes(a) for a in ("y", "Y", "yes", " YES ", "是", "好", "是的"))
    assert not any(is_yes(a) for a in ("", "n", "no", "否", "不"))


def test_error_line_translates_the_title() -> None:
    exc = InputError("shutdown: x")
    assert error_line(exc) == "refused: shutdown: x"
    zh = catalog("zh-CN")
    with i18n.using(zh, "zh-CN"):
        assert error_line(exc) == f"{zh.gettext('refused')}: shutdown: x"


def test_cost_table_aligned_in_cells_in_chinese() -> None:
    rows = [NameTotal("gpu", 1.5, 2.97), NameTotal("训练机", 12.25, 48.5)]
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        head, *lines = format_cost_table(rows, "¥", None).splitlines()
    assert head == "累计" and lines[0].split() == ["名称", "小时", "已花费"]
    assert len({cell_len(line) for line in lines}) == 1  # right-aligned: every line ends in the same cell
    assert lines[-1].startswith("合计")


@pytest.mark.parametrize(
    "st_",
    [
        AutostopStatus(armed=True, state="idle", seconds_left=770),
        AutostopStatus(armed=True, state="busy", failure="x"),
        AutostopStatus(armed=True, state="watching"),
        AutostopStatus(armed=True, state="stopping"),
        AutostopStatus(armed=True, state="failed", failure="x"),
    ],
)
def test_autostop_words_are_the_summary_in_english(st_: AutostopStatus) -> None:
    assert status_words(st_) == st_.summary()
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        assert "自动关机" in status_words(st_)


@pytest.mark.parametrize(
    "summary",
    [
        SyncSummary("push", "rsync", "/home/me/p", "/root/p", 1, 1234, 4.21),
        SyncSummary("pull", "sftp", "/home/me/p", "/root/p", 3, 0, 0.5, skipped_links=2),
        SyncSummary("push", "sftp", "/home/me/p", "p", 0, 0, 0.05, dry_run=True, skipped_links=1),
    ],
)
def test_sync_words_are_the_summary_line_in_english(summary: SyncSummary) -> None:
    assert summary_words(summary, "gpu") == summary_line(summary, "gpu")
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        words = summary_words(summary, "gpu")
    assert "个文件" in words and ("已上传" in words or "已下载" in words or "演练" in words)


def test_shutdown_report_in_both_languages() -> None:
    ok = ShutdownResult("gpu", True, "stopped (verified in 1.2 s)", 1.23)
    bad = ShutdownResult("gpu", False, "NOT shut down: it still accepts logins", 3.0)
    odd = ShutdownResult("gpu", False, "something else", 3.0)
    assert [report_detail(r) for r in (ok, bad, odd)] == [ok.detail, bad.detail, odd.detail]
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        assert report_detail(ok) == "已关机(已确认, 用时 1.2 秒)"
        assert report_detail(bad) == "没有关机: it still accepts logins"
        assert report_detail(odd) == "something else"


def test_questions_keep_the_y_n_keys_and_take_chinese_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpu_tui.commands.add_cmd import Asker

    asked: list[str] = []
    answers = iter(["是", "", "n", "好"])
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or next(answers))
    with i18n.using(catalog("zh-CN"), "zh-CN"):
        asker = Asker(True)
        assert asker.yes("信任它吗?", False) and not asker.yes("x", False)
        assert not asker.yes("x", True) and asker.yes("x", True)
    assert asked == ["信任它吗? [y/N] ", "x [y/N] ", "x [Y/n] ", "x [Y/n] "]
