"""core.watchrec: the watch loop's framed records parse the same whatever the chunk boundaries."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tui.core.metrics.watchrec import RecordParser, WatchFail, WatchHello, WatchRecord

N = "1a2b3c4d"
M = f"@@w{N}"

STREAM = (
    "bash: warning: something the login shell printed\n"
    f"{M} hello 1 4242\n"
    f"{M} rec 1\n"
    "cpu 10 0 5 100 1 0 0 0 0 0\nncpu 8\nload 0.50\nmem MemTotal: 1000\nmem MemAvailable: 500\n"
    "up 100.00 100 1 (init) S 0 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5\ndisk 1000 500\n"
    f'{M} jobs\n@@job 20260101-000000-abcd\njson {{"id": "x"}}\nalive 1\n'
    f"{M} autostop\nnow 1700000000\n"
    f"{M} apps\n1234, /usr/bin/python3, 2048, GPU-abc\n"
    f"{M} log 20260101-000000-abcd\n"
    "epoch 1 loss 0.5\r 10%|#   |\nno newline at the end"
    f"\n{M} endlog\n"
    f"{M} end\n"
    f"{M} rec 2\ncpu 11 0 5 101 1 0 0 0 0 0\n{M} end\n"
    f"{M} rec 3\n{M} log 20260101-000000-abcd\n"
    "line\n"  # a log that ends with a newline
    f"\n{M} endlog\n{M} log 20260101-000000-ffff\n\n{M} endlog\n{M} end\n"
    f"{M} fail cannot write to the state dir\n"
)


def parse_all(chunks: list[str] | list[bytes]) -> tuple[list[object], list[str]]:
    p = RecordParser(N)
    out: list[object] = []
    for c in chunks:
        out += p.feed(c.encode() if isinstance(c, str) else c)
    return out, p.stray


def test_whole_stream() -> None:
    out, stray = parse_all([STREAM])
    assert stray == ["bash: warning: something the login shell printed"]
    hello, r1, r2, r3, fail = out
    assert hello == WatchHello(1, 4242)
    assert isinstance(r1, WatchRecord) and r1.seq == 1
    assert r1.stats[0].startswith("cpu 10") and r1.stats[-1] == "disk 1000 500"
    assert r1.jobs is not None and r1.jobs.splitlines()[0] == "@@job 20260101-000000-abcd"
    assert r1.autostop == "now 1700000000"
    assert r1.apps == "1234, /usr/bin/python3, 2048, GPU-abc"
    assert r1.logs == {"20260101-000000-abcd": b"epoch 1 loss 0.5\r 10%|#   |\nno newline at the end"}
    assert isinstance(r2, WatchRecord) and r2.jobs is None and r2.apps is None and r2.autostop is None
    assert r2.logs == {} and len(r2.stats) == 1
    assert isinstance(r3, WatchRecord)
    assert r3.logs == {"20260101-000000-abcd": b"line\n", "20260101-000000-ffff": b""}
    assert fail == WatchFail("cannot write to the state dir")


def test_empty_apps_section_means_no_processes() -> None:
    out, _ = parse_all([f"{M} rec 1\n{M} apps\n{M} end\n"])
    assert isinstance(out[0], WatchRecord) and out[0].apps == ""


def test_a_foreign_mark_is_log_text() -> None:
    out, _ = parse_all([f"{M} rec 1\n{M} log j\n@@wdeadbeef end\n{M} endlog\n{M} end\n"])
    assert isinstance(out[0], WatchRecord) and out[0].logs == {"j": b"@@wdeadbeef end"}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=40))
def test_any_chunking_parses_the_same(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert parse_all(chunks) == parse_all([STREAM])


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab\n\r @w" + N)), max_size=200), st.integers(1, 7))
def test_garbage_never_raises(text: str, size: int) -> None:
    p = RecordParser(N)
    data = text.encode()
    for i in range(0, len(data), size):
        p.feed(data[i : i + size])


GBK_END = "第 3 轮 loss: 0.91\r\n已杀死\n".encode("gbk") + b"\xff tail"
RAW = f"{M} rec 1\n{M} jobs\n@@job j\ncharset GBK\n{M} log j\n".encode() + GBK_END + f"\n{M} endlog\n{M} end\n".encode()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(RAW)), max_size=30))
def test_a_log_end_keeps_its_bytes_whatever_the_chunking(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [RAW[a:b] for a, b in zip([0, *points], [*points, len(RAW)], strict=True)]
    (rec,), _ = parse_all(chunks)
    assert isinstance(rec, WatchRecord) and rec.logs == {"j": GBK_END}
    assert rec.jobs == "@@job j\ncharset GBK"


def test_invalid_bytes_outside_a_log_become_replacement_characters() -> None:
    (rec,), stray = parse_all([b"\xff\xfe stray\n" + f"{M} rec 1\n".encode() + b"cpu \xff 1\n" + f"{M} end\n".encode()])
    assert isinstance(rec, WatchRecord) and rec.stats == ["cpu \ufffd 1"]
    assert stray == ["\ufffd\ufffd stray"]
