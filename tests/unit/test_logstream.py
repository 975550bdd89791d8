"""gpu_tui.core.trainlog.stream: raw log bytes -> display lines (no mocks, no I/O).

- what training scripts write (docs/FIELD_NOTES.md, "Training logs"): tqdm `\\r` redraws,
  stacked bars with ESC[A, prints glued onto a bar, ANSI/OSC, `\\b`, tabs, bad UTF-8;
- bounds: a line is cut at `max_line_chars`, only `max_lines` lines are kept;
- hypothesis: any chunking of the same bytes gives the same result, no output carries a
  control character, and the bounds hold whatever the input.
The whole-log corpus (tests/data/logs) is run by test_logparse.py with LogSummary.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tui.core.trainlog import stream as logstream
from gpu_tui.core.trainlog.stream import (
    MAX_DEPTH,
    TRUNCATION_MARK,
    LogEvent,
    LogStream,
    StreamUpdate,
    feed_all,
)

CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
BAR = " 45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s, loss=0.523]"


def finals(data: bytes, **kw: int) -> list[str]:
    return [e.text for e in feed_all(LogStream(**kw), [data]) if e.final]


def events(data: bytes, **kw: int) -> list[tuple[str, bool]]:
    return [(e.text, e.final) for e in feed_all(LogStream(**kw), [data])]


def test_public_api_is_exported() -> None:
    for name in logstream.__all__:
        assert hasattr(logstream, name), name


def test_lines_and_line_endings() -> None:
    assert finals(b"a\nb\r\nc\n\nd") == ["a", "b", "c", "", "d"]
    s = LogStream()
    up = s.feed(b"one\ntw")
    assert up.lines == ("one",) and up.live == ("tw",)
    up = s.feed(b"o\r")
    assert up.lines == () and up.live == ("two",)  # a lone \r only moves the cursor
    up = s.feed(b"\n")
    assert up.lines == ("two",) and up.live == ()
    assert list(s.lines) == ["one", "two"] and s.lines_seen == 2 and s.bytes_fed == 9


def test_trailing_spaces_go_leading_spaces_stay() -> None:
    assert finals(b'  File "x.py", line 1   \n') == ['  File "x.py", line 1']


def test_tqdm_redraws_leave_one_line() -> None:
    s = LogStream()
    state = b"\r%3d%%|bar| %d/10000 [00:01<00:02, 9.99it/s]"
    data = b"".join(state % (i // 100, i) for i in range(10_000))
    up = s.feed(data)
    last = " 99%|bar| 9999/10000 [00:01<00:02, 9.99it/s]"
    assert up.lines == () and up.live == (last,)
    assert s.states_replaced == 9_999
    assert [e.text for e in up.events[:2]] == [
        "  0%|bar| 0/10000 [00:01<00:02, 9.99it/s]",
        "  0%|bar| 1/10000 [00:01<00:02, 9.99it/s]",
    ]
    assert not any(e.final for e in up.events)
    up = s.feed(b"\n")
    assert up.lines == () and up.live == (last,)  # held: a bar row a cursor-up could revisit
    up = s.feed(b"next\n")
    assert up.lines == (last, "next")
    assert s.lines_seen == 2


def test_print_after_a_bar_with_cr_is_its_own_line() -> None:
    assert events(b"\r 45%|....| 450/1000\rEpoch 2 done\n") == [(" 45%|....| 450/1000", False), ("Epoch 2 done", True)]


def test_print_glued_onto_a_bar_is_split_off() -> None:
    # stdout's print lands right after stderr's bar, no separator; tqdm's padding before it
    data = ("\r" + BAR + "  " + "Epoch 2 done\n\r" + BAR + "\n").encode()
    assert events(data) == [(BAR, False), ("Epoch 2 done", True), (BAR, True)]
    # a traceback starting on the bar's row
    data = ("\r" + BAR + "Traceback (most recent call last):\n").encode()
    assert finals(data) == ["Traceback (most recent call last):"]
    # a row that only looks like a bar because of a plain print is not split
    assert finals(b"x [00:12<00:15, 36.10it/s]y\n") == ["x [00:12<00:15, 36.10it/s]y"]


def test_tqdm_write_clears_and_redraws() -> None:
    bar = "\r 50%|█████     | 5/10 [00:05<00:05,  1.00it/s]"
    done = "100%|██████████| 10/10 [00:10<00:00,  1.00it/s]"
    data = (bar + "\r" + " " * 48 + "\r{'loss': 1.5}\n" + bar + "\r" + done + "\n").encode()
    assert finals(data) == ["{'loss': 1.5}", done]


def test_stacked_bars_never_repeat_the_outer_bar() -> None:
    """tqdm position=1: `\\n\\r<inner>ESC[A` for each inner redraw, `\\r<outer>` for the outer."""
    out = []
    out.append("\router 0/2")
    for epoch in range(2):
        for step in range(50):
            out.append(f"\n\rinner {step}/50\x1b[A")
        out.append("\n\r" + " " * 12 + "\x1b[A")  # inner closes, leave=False
        out.append(f"\router {epoch + 1}/2")
    out.append("\n")
    s = LogStream()
    up = s.feed("".join(out).encode())
    assert up.live == ("outer 2/2",)
    assert s.close().lines == ("outer 2/2",)
    assert list(s.lines) == ["outer 2/2"]
    assert s.states_replaced == 2 * 50 + 2  # every inner state and the two earlier outer states


def test_rows_held_for_a_cursor_up_are_released_in_order() -> None:
    data = b"\rbar 1\nplain 1\n\rbar 2\n\rbar 3\x1b[A\rbar 2b\n\n"
    assert finals(data) == ["bar 1", "plain 1", "bar 2b", "bar 3"]
    # as on a terminal, a line printed after going back down overwrites the lower bar's row
    data = b"\rbar 2\n\rbar 3\x1b[A\rbar 2b\nplain 2\n"
    assert events(data) == [("bar 2", False), ("bar 3", False), ("bar 2b", True), ("plain 2", True)]


def test_cursor_up_past_what_is_held_is_clamped() -> None:
    assert finals(b"a\nb\n\x1b[5Ac\n") == ["a", "b", "c"]


def test_escapes_are_removed() -> None:
    data = (
        b"\x1b]0;title\x07\x1b[1;31mred\x1b[0m \x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\"
        b" \x1b(Bsgr0\x1b[m \x1b[?25lhidden-cursor\x1b[?25h \x1b7saved\x1b8\n"
    )
    assert finals(data) == ["red link sgr0 hidden-cursor saved"]
    # C1 forms of CSI and OSC (U+009B, U+009D) as UTF-8
    assert finals("a\u009b31mb\u009d0;t\u0007c\n".encode()) == ["abc"]
    # DCS / APC strings, CAN aborting a sequence
    assert finals(b"a\x1bPq#0;2;0;0;0\x1b\\b\x1b_apc\x1b\\c\x1b[3\x18d\n") == ["abcd"]


def test_unterminated_osc_ends_at_the_newline() -> None:
    assert finals(b"\x1b]0;no terminator\nnext\n") == ["", "next"]


def test_controls_bidi_and_bom_are_dropped() -> None:
    data = b"\xef\xbb\xbfa\x00\x00b\x07c\x7fd\x0ee \xe2\x80\xaeevil\xe2\x80\xac\n"
    assert finals(data) == ["abcde evil"]


def test_backspace_and_tab() -> None:
    assert finals(b"Solving environment: /\b-\b\\\b|\bdone\n") == ["Solving environment: done"]
    assert finals(b"ab\tc\td\n") == ["ab      c       d"]
    assert finals(b"\b\bx\n") == ["x"]  # nothing to step back over
    # Keras: \b x width, \r, the new bar (the old state is replaced, not mangled)
    data = b"1/3 [=>.]" + b"\b" * 9 + b"\r3/3 [===]\n"
    assert events(data) == [("1/3 [=>.]", False), ("3/3 [===]", True)]


def test_erase_line() -> None:
    assert events(b"\rloading 10%\x1b[2Kdone\n") == [("loading 10%", False), ("done", True)]
    assert events(b"abcdef\b\b\b\x1b[Kxy\n") == [("abcxy", True)]


def test_utf8_split_anywhere() -> None:
    text = "训练 loss 0.5 🚀 █▌\n".encode()
    for cut in range(1, len(text)):
        s = LogStream()
        got = [e.text for e in s.feed(text[:cut]).events + s.feed(text[cut:]).events]
        assert got == ["训练 loss 0.5 🚀 █▌"], cut


def test_invalid_utf8_becomes_replacement_characters() -> None:
    assert finals(b"a\xffb\xe2\x82c\n") == ["a\ufffdb\ufffdc"]
    s = LogStream()
    s.feed(b"end \xe2\x82")
    assert s.close().lines == ("end \ufffd",)  # a character cut by the end of the log


GBK_LOG = (
    "第 3 轮 epoch: [3/500], global_step: 40, loss: 0.91 训练中\r\n  5%|▌ | 5/100 [00:01<00:19, 5.00it/s]\r已杀死\n"
)


def test_gbk_log_is_decoded_and_keeps_its_numbers() -> None:
    data = GBK_LOG.replace("▌", "#").encode("gbk")
    stream = LogStream()
    feed_all(stream, [data])
    assert list(stream.lines) == ["第 3 轮 epoch: [3/500], global_step: 40, loss: 0.91 训练中", "已杀死"]


def test_utf8_before_the_first_gbk_line_stays_utf8() -> None:
    data = "café ok\n".encode() + "第 3 轮 loss: 0.5\n".encode("gb18030")
    stream = LogStream()
    feed_all(stream, [data[i : i + 1] for i in range(len(data))])
    assert list(stream.lines) == ["café ok", "第 3 轮 loss: 0.5"]


def test_junk_bytes_in_utf8_are_replaced_not_taken_for_gbk() -> None:
    stream = LogStream()
    feed_all(stream, [b"ok \xff\xfe 12\n", "café 3.5\n".encode()])
    assert list(stream.lines) == ["ok \ufffd\ufffd 12", "café 3.5"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=40), max_size=20))
def test_gbk_split_anywhere(cuts: list[int]) -> None:
    data = GBK_LOG.replace("▌", "#").encode("gbk") * 3
    chunks, pos = [], 0
    for n in cuts:
        chunks.append(data[pos : pos + n])
        pos += n
    chunks.append(data[pos:])
    whole, split = LogStream(), LogStream()
    feed_all(whole, [data])
    feed_all(split, chunks)
    assert list(split.lines) == list(whole.lines) and "已杀死" in whole.lines


def test_close_commits_live_rows_and_starts_afresh() -> None:
    s = LogStream()
    s.feed(b"\rbar 1\n\rbar 2")
    up = s.close()
    assert up.lines == ("bar 1", "bar 2") and up.live == ()
    assert s.feed(b"more\n").lines == ("more",)
    assert s.close().events == ()


def test_long_line_is_cut_and_marked() -> None:
    s = LogStream(max_line_chars=10)
    up = s.feed(b"0123456789abcdef\nshort\n")
    assert up.lines == ("0123456789" + TRUNCATION_MARK, "short")


def test_hundred_megabyte_line_stays_bounded() -> None:
    s = LogStream(max_line_chars=4096)
    chunk = b"y" * (1 << 20)
    for _ in range(100):
        up = s.feed(chunk)
        assert up.events == ()
        assert [len(r) for r in up.live] == [4096 + len(TRUNCATION_MARK)]
    assert s.bytes_fed == 100 << 20
    assert s.feed(b"\n").lines == ("y" * 4096 + TRUNCATION_MARK,)


def test_only_max_lines_are_kept_but_all_are_counted() -> None:
    s = LogStream(max_lines=3)
    s.feed(b"".join(b"line %d\n" % i for i in range(1000)))
    assert list(s.lines) == ["line 997", "line 998", "line 999"]
    assert s.lines_seen == 1000


def test_csi_split_after_an_intermediate_byte() -> None:
    whole = b"a\x1b[1 2Ab\n"
    for cut in range(1, len(whole)):
        s = LogStream()
        evs = s.feed(whole[:cut]).events + s.feed(whole[cut:]).events + s.close().events
        assert [e.text for e in evs] == finals(whole), cut


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        LogStream(max_lines=0)
    with pytest.raises(ValueError):
        LogStream(max_line_chars=0)


def test_update_types() -> None:
    up = LogStream().feed(b"x\n")
    assert isinstance(up, StreamUpdate) and up.events == (LogEvent("x", True),)


# --------------------------------------------------------------------------- hypothesis

TOKENS = [
    b"\r",
    b"\n",
    b"\r\n",
    b"\x1b[A",
    b"\x1b[2A",
    b"\x1b[40A",
    b"\x1b[B",
    b"\x1b[2K",
    b"\x1b[K",
    b"\x1b[1G",
    b"\x1b[31m",
    b"\x1b[0m",
    b"\x1b]0;title\x07",
    b"\x1b]8;;http://x\x1b\\",
    b"\x1b(B",
    b"\x1bM",
    b"\x1b",
    b"\x1b[",
    b"\x1b]",
    b"\x1bP",
    b"1;2",
    b" ",
    b"\x18",
    b"\xc2\x9b",
    b"\xc2\x9d",
    "é".encode(),
    "█▌".encode(),
    "🚀".encode(),
    b"\xff",
    b"\xe2\x82",
    b"\x08",
    b"\t",
    b"\x00",
    b"\x07",
    b"\xe2\x80\xae",
    BAR.encode(),
    b" [00:01<00:02, 3.00it/s]",
    b"Epoch 2 done",
    b"x",
    b"abc ",
    b"[",
    b"]",
    b"  ",
    b"Traceback (most recent call last):",
]
PIECES = st.one_of(st.sampled_from(TOKENS), st.binary(max_size=6))
LOGS = st.lists(PIECES, max_size=50).map(b"".join)


def run(data: bytes, cuts: list[int], **kw: int) -> tuple:
    s = LogStream(**kw)
    got: list[LogEvent] = []
    pos = 0
    live: tuple[str, ...] = ()
    for cut in sorted(cuts) + [len(data)]:
        up = s.feed(data[pos:cut])
        got.extend(up.events)
        live = up.live
        pos = cut
    end = s.close()
    got.extend(end.events)
    return got, live, list(s.lines), s.lines_seen, s.states_replaced, s.bytes_fed


@settings(max_examples=400, deadline=None)
@given(
    data=LOGS, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12), cap=st.sampled_from([4096, 24, 3])
)
def test_any_chunking_gives_the_same_result(data: bytes, cuts: list[int], cap: int) -> None:
    cuts = [c for c in cuts if c <= len(data)]
    whole = run(data, [], max_line_chars=cap, max_lines=7)
    assert run(data, cuts, max_line_chars=cap, max_lines=7) == whole
    assert run(data, list(range(1, len(data))), max_line_chars=cap, max_lines=7) == whole


@settings(max_examples=300, deadline=None)
@given(data=LOGS, cap=st.sampled_from([4096, 16]))
def test_output_is_printable_and_bounded(data: bytes, cap: int) -> None:
    s = LogStream(max_lines=5, max_line_chars=cap)
    texts: list[str] = []
    for i in range(0, len(data), 7):
        up = s.feed(data[i : i + 7])
        texts += [e.text for e in up.events] + list(up.live)
        assert len(up.live) <= 2 * MAX_DEPTH + 1
        assert len(s._rows) <= 2 * MAX_DEPTH + 2  # the held screen, whatever the cursor did
        assert all(len(r.text) <= cap for r in s._rows)
    texts += [e.text for e in s.close().events]
    for text in texts:
        assert CONTROL.search(text) is None, repr(text)
        assert len(text) <= cap + len(TRUNCATION_MARK)
    assert len(s.lines) <= 5


@settings(max_examples=100, deadline=None)
@given(ups=st.lists(st.integers(min_value=1, max_value=100), max_size=40))
def test_cursor_games_keep_the_screen_small(ups: list[int]) -> None:
    s = LogStream()
    for n in ups:
        s.feed(b"\rbar\n" * n + b"\x1b[%dA" % n + b"\rx")
        assert len(s._rows) <= 2 * MAX_DEPTH + 2
