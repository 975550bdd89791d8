"""core/trainlog/decode: a log's bytes in any encoding read as written (UTF-8, the locale's, GB18030),
split anywhere, never losing a number; and the trainlog/read helpers that take them."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tui.core.trainlog.decode import LogDecoder, as_log_bytes, codec_for_charset, decode_log, sniff_encoding
from gpu_tui.core.trainlog.read import lines_of, summarize, whole_lines, window_stream
from gpu_tui.core.trainlog.stream import LogStream, feed_all

BYTES = Path(__file__).parent.parent / "data" / "logs" / "bytes"
REAL = Path(__file__).parent.parent / "data" / "logs" / "real"
# (re-encoded file, its UTF-8 original in the real corpus, encoding)
PAIRS = [
    ("yolov7-nccl-abort-zh.gbk.log", "nccl/yolov7-nccl-abort-zh.log", "gbk"),
    ("yolo26-da-stops-epoch1.gb18030.log", "ultralytics/yolo26-da-stops-epoch1.log", "gb18030"),
]


@pytest.mark.parametrize(
    ("charset", "codec"),
    [
        ("UTF-8", None),
        ("utf8", None),
        ("ANSI_X3.4-1968", None),
        (None, None),
        ("", None),
        ("no-such-set", None),
        ("GBK", "gb18030"),
        ("GB2312", "gb18030"),
        ("GB18030", "gb18030"),
        ("BIG5", "big5"),
        ("EUC-JP", "euc_jp"),
        ("ISO-8859-1", "iso8859-1"),
    ],
)
def test_a_locale_charmap_names_the_codec_to_try(charset: str | None, codec: str | None) -> None:
    assert codec_for_charset(charset) == codec


@pytest.mark.parametrize(("name", "original", "encoding"), PAIRS)
def test_a_re_encoded_real_log_reads_as_its_utf8_original(name: str, original: str, encoding: str) -> None:
    data, utf8 = (BYTES / name).read_bytes(), (REAL / original).read_bytes()
    assert data == utf8.decode().encode(encoding)  # the file is what tests/data/logs/bytes/SOURCES.md says
    assert decode_log(data) == utf8.decode()
    assert lines_of(data, from_start=True) == lines_of(utf8, from_start=True)
    got, want = summarize(data, from_start=True), summarize(utf8, from_start=True)
    assert (got.failure, got.last_loss, got.progress) == (want.failure, want.last_loss, want.progress)


def test_the_crlf_copy_reads_like_the_lf_original() -> None:
    crlf = (BYTES / "paddleocr-v3-rec-sarloss.crlf.log").read_bytes()
    lf = (REAL / "paddle/paddleocr-v3-rec-sarloss.log").read_bytes()
    assert crlf == lf.replace(b"\n", b"\r\n")
    assert lines_of(crlf, from_start=True) == lines_of(lf, from_start=True)
    assert summarize(crlf, from_start=True).last_loss == pytest.approx(1.606826)


def test_a_window_reads_the_switching_line_in_gbk_from_its_start() -> None:
    # 训 in GBK (D1 B5) is also valid UTF-8 by chance (U+0475); 练 (C1 B7) is not. Streaming,
    # 训 stays mis-decoded; a window read whole reads that line in GBK from its start
    data = "ok 1\n训练 loss: 0.5 已杀死\n".encode("gbk")
    assert data[5:7].decode("utf-8") == "\u0475"
    assert sniff_encoding(data) == ("gb18030", 5)
    assert decode_log(data) == "ok 1\n训练 loss: 0.5 已杀死\n"
    assert lines_of(data, from_start=True) == ["ok 1", "训练 loss: 0.5 已杀死"]
    stream = LogStream()
    feed_all(stream, [data])
    assert list(stream.lines) == ["ok 1", "\u0475练 loss: 0.5 已杀死"]  # the documented streaming limit
    split = LogStream(switch=sniff_encoding(data))
    feed_all(split, [data[i : i + 1] for i in range(len(data))])  # the planned switch, byte by byte
    assert list(split.lines) == ["ok 1", "训练 loss: 0.5 已杀死"]


def test_utf8_lines_before_gbk_stay_utf8_in_a_window() -> None:
    data = "café ok\n".encode() + "第 3 轮 loss: 0.5\n".encode("gb18030")
    assert sniff_encoding(data) == ("gb18030", 9)  # the GBK line, not the UTF-8 one before it
    assert lines_of(data, from_start=True) == ["café ok", "第 3 轮 loss: 0.5"]


def test_the_locale_decides_where_gb18030_would_not() -> None:
    one = "已 12.5\n".encode("gbk")  # one CJK character: too little to take for GB18030 unasked
    assert decode_log(one) == "\ufffd\ufffd 12.5\n"
    assert decode_log(one, "GBK") == "已 12.5\n"
    big5 = "已殺死 step 7/10\n".encode("big5")
    assert decode_log(big5, "BIG5") == "已殺死 step 7/10\n"
    assert "step 7/10" in decode_log(big5)  # a wrong guess keeps the numbers
    assert (
        summarize(big5, from_start=True, charset="BIG5").failure
        == summarize("已殺死 step 7/10\n", from_start=True).failure
    )


def test_junk_stays_junk_with_a_utf8_locale() -> None:
    assert decode_log(b"ok \xff 12\n", "UTF-8") == "ok \ufffd 12\n"


def test_text_goes_back_to_its_bytes() -> None:
    raw = "已杀死 0.5\n".encode("gbk")
    assert as_log_bytes(raw.decode("utf-8", "surrogateescape")) == raw
    assert as_log_bytes("loss 0.5") == b"loss 0.5"
    assert as_log_bytes("\ud800") == b"?"  # a surrogate nothing escaped


def test_whole_lines_drops_a_cut_first_line_of_bytes_or_text() -> None:
    assert whole_lines(b"\xb7\xc5 cut\nnext\n", from_start=False) == b"next\n"
    assert whole_lines("cut\nnext", from_start=False) == "next"
    assert whole_lines(b"no newline", from_start=False) == b""
    assert whole_lines(b"all\n", from_start=True) == b"all\n"


def test_a_window_stream_goes_on_in_the_windows_encoding() -> None:
    first = "第 1 轮 loss: 0.9\r\n".encode("gbk")
    stream = window_stream(first)
    stream.feed(first)
    assert stream.encoding == "gb18030"
    # the follow: a GBK character split over two reads, and text that alone would look UTF-8
    nxt = "中 loss: 0.8\r\n".encode("gbk")
    assert stream.feed(nxt[:1]).lines == ()
    assert stream.feed(nxt[1:]).lines == ("中 loss: 0.8",)


GBK_RUN = "第 3 轮 epoch: [3/500], loss: 0.91 训练中\r\n  5%|# | 5/100 [00:01<00:19]\r已杀死\r\n".encode("gbk")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=30), max_size=20), st.sampled_from([None, "GBK", "UTF-8"]))
def test_split_anywhere_with_any_locale_reads_the_same(cuts: list[int], charset: str | None) -> None:
    data = GBK_RUN * 3
    chunks, pos = [], 0
    for n in cuts:
        chunks.append(data[pos : pos + n])
        pos += n
    chunks.append(data[pos:])
    whole, split = LogStream(charset=charset), LogStream(charset=charset)
    feed_all(whole, [data])
    feed_all(split, chunks)
    assert list(split.lines) == list(whole.lines)
    assert list(whole.lines)[:2] == ["第 3 轮 epoch: [3/500], loss: 0.91 训练中", "已杀死"]


def test_the_decoder_says_where_it_switched() -> None:
    dec = LogDecoder()
    assert dec.decode(b"ascii 1\n") == "ascii 1\n" and dec.switched_at is None
    assert dec.decode("已杀死\n".encode("gbk")) == "已杀死\n"
    assert (dec.encoding, dec.switched_at) == ("gb18030", 8)
    assert LogDecoder(switch=("gb18030", 0)).switched_at == 0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=200), max_size=12))
def test_a_sniffed_window_reads_the_same_split_anywhere(cuts: list[int]) -> None:
    data = "café 1\n".encode() + "训练中 loss: 0.5\r\n".encode("gbk") + (BYTES / PAIRS[0][0]).read_bytes()
    switch = sniff_encoding(data)
    assert switch == ("gb18030", 8)
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]
    whole, split = LogStream(switch=switch), LogStream(switch=switch)
    feed_all(whole, [data])
    feed_all(split, chunks)
    assert list(split.lines) == list(whole.lines)
    assert list(whole.lines)[:2] == ["café 1", "训练中 loss: 0.5"] and whole.lines[-1] == "已放弃 (核心已转储)"
