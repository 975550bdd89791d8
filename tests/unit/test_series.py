"""The whole run's series (issue 24): core/trainlog/series, and the summariser shipped to the
instance (services/jobs/series/summariser.py) run here on real files, by this python and old ones."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from oldpythons import require_old_python, version_of

from gpu_tui.core.trainlog.overview import BUCKETS, TAIL, SeriesOverview
from gpu_tui.core.trainlog.series import (
    EVAL_LOSS,
    LOSS,
    LogIdentity,
    Point,
    SeriesReader,
    decode_points,
    json_rows,
    safe_cut,
)
from gpu_tui.core.trainlog.series_decode import decode_series
from gpu_tui.services.jobs.series import ship
from gpu_tui.services.notify.bundle import no_possessive

REAL = Path(__file__).resolve().parent.parent / "data" / "logs" / "real"
LOGS = sorted(REAL.rglob("*.log"))


def whole(data: bytes) -> list[Point]:
    reader = SeriesReader()
    return reader.feed(data) + reader.close()


def in_catch_ups(data: bytes, seed: int) -> list[Point]:
    """As the summariser reads a growing log: random reads, each fed up to its safe cut, the
    reader saved and loaded again between them."""
    rnd = random.Random(seed)
    blob, offset, got = SeriesReader().dumps(), 0, []
    while offset < len(data):
        end = min(len(data), offset + rnd.randint(1, 30000))
        reader = SeriesReader.loads(blob)
        assert reader is not None
        cut = safe_cut(data[offset:end])
        got += reader.feed(data[offset : offset + cut])
        offset += cut
        blob = reader.dumps()
        if end == len(data) and cut == 0:
            break
    reader = SeriesReader.loads(blob)
    assert reader is not None
    return got + reader.feed(data[offset:]) + reader.close()


@pytest.mark.parametrize("path", LOGS, ids=lambda p: str(p.relative_to(REAL)))
def test_catch_ups_give_the_points_one_read_of_the_whole_log_gives(path: Path) -> None:
    data = path.read_bytes()
    assert in_catch_ups(data, seed=len(data)) == whole(data)


def test_the_loss_is_the_one_log_summary_picks_at_every_step() -> None:
    log = b"".join(
        f"{{'loss': {1 / s:.4f}, 'learning_rate': {s * 1e-5:.1e}, 'epoch': {s / 10}}}\n".encode() for s in range(1, 11)
    )
    log += b"{'eval_loss': 0.25, 'epoch': 1.0}\n"
    points = whole(log)
    by_tag: dict[str, list[Point]] = {}
    for p in points:
        by_tag.setdefault(p.tag, []).append(p)
    assert [p.value for p in by_tag[LOSS]] == [pytest.approx(1 / s, abs=1e-4) for s in range(1, 11)]
    assert [p.x for p in by_tag[LOSS]] == [pytest.approx(s / 10) for s in range(1, 11)]  # the dicts' epoch
    assert len(by_tag["learning_rate"]) == 10 and by_tag[EVAL_LOSS][0].value == 0.25
    assert "epoch" not in by_tag  # a counter, never a series


def test_a_bar_redrawn_with_the_same_step_and_loss_is_one_point() -> None:
    bar = "".join(f"\r 50%|#####     | 5/10 [00:05<00:05, 1.00it/s, loss=0.{i // 3}]" for i in range(9))
    points = whole(bar.encode())
    assert [(p.x, p.value) for p in points if p.tag == LOSS] == [(5, 0.0), (5, 0.1), (5, 0.2)]


def test_a_nan_loss_is_no_point() -> None:
    assert [p.value for p in whole(b"step 1 loss: 0.5\nstep 2 loss: nan\nstep 3 loss: 0.25\n")] == [0.5, 0.25]


def test_the_identity_tells_an_appended_log_from_a_truncated_rotated_or_replaced_one() -> None:
    head = b"epoch 1 loss 0.5\n" * 10
    ident = LogIdentity.of(42, head)
    assert ident.same_log(42, len(head) + 100, len(head), head + b"more")  # it grew
    assert not ident.same_log(42, 10, len(head), head[:10])  # truncated
    assert not ident.same_log(43, len(head), len(head), head)  # rotated: a new file at the path
    assert not ident.same_log(42, len(head), len(head), b"X" + head[1:])  # rewritten in place
    assert LogIdentity.from_json(ident.as_json()) == ident and LogIdentity.from_json({"inode": 1}) is None


def test_a_saved_reader_of_another_format_is_not_taken_up() -> None:
    assert SeriesReader.loads(b"not a pickle") is None


def test_possessive_quantifiers_give_way_to_greedy_ones_for_an_old_python() -> None:
    assert no_possessive(r"([^,\]]*+)[^\]]*+\]") == r"([^,\]]*)[^\]]*\]"
    assert no_possessive(r"a?+b{2}+c++") == r"a?b{2}c+"
    for kept in (r"[*+]", r"\*+", r"\++", r"a+b", r"(?:x)+"):
        assert no_possessive(kept) == kept


# ------------------------------------------------------------------ the shipped summariser


def install(state: Path) -> None:
    for name, text in ship.bundle_files().items():
        path = state / "bin" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def once_text(state: Path, job: Path, *args: str, python: str = sys.executable) -> tuple[dict, str]:
    """The summariser's `once` (with `args`: GEN FROM [thin]): its status and what it sent."""
    script = state / "bin" / ship.DIR / "summariser.py"
    out = subprocess.run(
        [python, "-S", str(script), str(state), "once", str(job), *args], capture_output=True, check=True, timeout=120
    ).stdout
    head, _nl, body = out.partition(b"\n")
    assert head.startswith(b"@@status "), out[:300]
    return json.loads(head[len(b"@@status ") :]), zlib.decompress(body).decode()


def once(state: Path, job: Path, python: str = sys.executable) -> tuple[dict, dict]:
    status, text = once_text(state, job, python=python)
    return status, decode_points(text)


def expected(data: bytes, *, closed: bool) -> dict:
    reader = SeriesReader()
    points = reader.feed(data[: safe_cut(data)] if not closed else data) + (reader.close() if closed else [])
    out: dict = {}
    for p in points:
        out.setdefault(p.tag, []).append((p.x, p.value, p.time))
    return out


def job_dir(tmp_path: Path) -> tuple[Path, Path]:
    state = tmp_path / "state"
    install(state)
    job = state / "jobs" / "j1"
    job.mkdir(parents=True)
    return state, job


def test_the_summariser_reads_the_whole_log_once_then_only_what_grew(tmp_path: Path) -> None:
    state, job = job_dir(tmp_path)
    data = b"".join(p.read_bytes() for p in LOGS[:40])
    half = len(data) // 2
    (job / "log").write_bytes(data[:half])
    status, points = once(state, job)
    assert status["read"] == safe_cut(data[:half]) and not status["reread"]
    assert points == expected(data[:half], closed=False)
    with (job / "log").open("ab") as f:
        f.write(data[half:])
    status, points = once(state, job)
    assert status["read"] == safe_cut(data) - safe_cut(data[:half])  # only the new bytes
    assert points == expected(data, closed=False)
    (job / "exit_code").write_text("0\n")  # the job ended: its last line and live rows count
    status, points = once(state, job)
    assert status["closed"] and points == expected(data, closed=True)
    status, _points = once(state, job)
    assert status["read"] == 0


def test_a_truncated_or_rotated_log_is_read_again_from_its_start(tmp_path: Path) -> None:
    state, job = job_dir(tmp_path)
    first, second = LOGS[-1].read_bytes(), LOGS[-2].read_bytes()
    (job / "log").write_bytes(first)
    once(state, job)
    (job / "log").write_bytes(second[:100])  # truncated in place, then written again
    status, points = once(state, job)
    assert status["reread"] and points == expected(second[:100], closed=False)
    os.rename(job / "log", job / "log.1")  # rotated: a new file, which happens to be as long
    (job / "log").write_bytes(second)
    status, points = once(state, job)
    assert status["reread"] and points == expected(second, closed=False)


def test_a_state_torn_or_from_other_rules_is_read_again(tmp_path: Path) -> None:
    state, job = job_dir(tmp_path)
    data = LOGS[-3].read_bytes()
    (job / "log").write_bytes(data)
    once(state, job)
    (job / "series.state").write_bytes(b'{"rules": "other"}\n...')
    with (job / "series.jsonl").open("a") as f:
        f.write('["loss", 1, 0.5')  # a catch-up killed mid-line
    status, points = once(state, job)
    assert status["read"] == safe_cut(data) and points == expected(data, closed=False)


def test_the_summariser_gives_the_same_points_on_an_old_python3(tmp_path: Path) -> None:
    pythons = [p for p in require_old_python() if (version_of(p) or (0, 0)) >= (3, 7)]
    if not pythons:
        pytest.skip("the summariser needs python3 >= 3.7; only 3.6 was found")
    data = b"".join(p.read_bytes() for p in LOGS[::3])
    for python in pythons:
        state, job = job_dir(tmp_path / Path(python).name)
        (job / "log").write_bytes(data[: len(data) // 3])
        once(state, job, python)
        (job / "log").write_bytes(data)
        (job / "exit_code").write_text("0\n")
        _status, points = once(state, job, python)
        assert points == expected(data, closed=True), python


def test_a_series_file_cut_mid_line_gives_its_whole_lines() -> None:
    assert decode_points('["loss",1,0.5,null]\n["lr",1,0.1,null]\n["loss",2,0.') == {
        "loss": [(1, 0.5, None)],
        "lr": [(1, 0.1, None)],
    }
    assert decode_points('["loss",1,0.5,null]\nnot json\n["loss",2,0.25,null]\n') == {
        "loss": [(1, 0.5, None), (2, 0.25, None)]
    }


def overview_of(text: str) -> SeriesOverview:
    """An overview fed every row of a series file at once."""
    overview = SeriesOverview()
    for row in json_rows(text):
        overview.add_row(row)
    return overview


def test_the_summariser_keeps_an_overview_of_the_points_it_writes(tmp_path: Path) -> None:
    state, job = job_dir(tmp_path)
    # long enough that its loss and learning rate pass what an overview keeps whole
    data = b"".join(p.read_bytes() for p in LOGS) * 3
    (job / "log").write_bytes(data[: len(data) // 2])
    once(state, job)
    (job / "log").write_bytes(data)  # a second catch-up: the overview is taken up from the state
    (job / "exit_code").write_text("0\n")
    status, whole = once_text(state, job)
    thin_status, thin = once_text(state, job, "-", "0", "thin")
    assert thin_status["thin"] and thin_status["read"] == 0 and thin_status["gen"] == status["gen"]
    assert json.loads(thin.partition("\n")[0]) == {"gen": status["gen"], "thin": True}
    # what the instance sends is the overview of the whole file, point for point
    rows = [row for row in json_rows(thin) if isinstance(row, list)]
    assert rows == list(overview_of(whole).rows())
    full, kept = decode_series(whole), decode_series(thin)
    assert list(kept) == list(full)  # every series, in the file's order
    long = [key for key, pts in full.items() if len(pts) > 4 * TAIL]
    assert long, "the corpus should hold series an overview thins"
    for key, pts in full.items():
        if len(pts) <= TAIL:
            assert kept[key] == pts, key
        else:
            assert len(kept[key]) <= 4 * BUCKETS + TAIL and kept[key][-TAIL:] == pts[-TAIL:], key
            values = [v for _x, v, _t in pts]
            assert min(v for _x, v, _t in kept[key]) == min(values), key
            assert max(v for _x, v, _t in kept[key]) == max(values), key


def test_a_log_read_again_starts_its_overview_again(tmp_path: Path) -> None:
    state, job = job_dir(tmp_path)
    (job / "log").write_bytes(LOGS[-1].read_bytes())
    once(state, job)
    (job / "log").write_bytes(LOGS[-2].read_bytes()[:2000])  # truncated and written anew
    status, whole = once_text(state, job)
    _status, thin = once_text(state, job, "-", "0", "thin")
    assert status["reread"] and decode_series(thin) == decode_series(whole)
