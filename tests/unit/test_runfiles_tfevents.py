"""TensorBoard event files, as tensorboard's own writer writes them, read value for value:
whole, cut mid-record, fed as they grow, and damaged."""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

import pytest
from tbevents import event, float32, simple, tensor_scalar, text, write_events

from gpu_tui.core.runfiles.model import TENSORBOARD
from gpu_tui.core.runfiles.tfevents import EventFileName, EventFileReader, parse_event_file_name, read_event_file
from gpu_tui.core.runfiles.tfrecord import HEADER, RecordSplitter, frame

T0 = 1_700_000_000.25


def _run(tmp_path: Path) -> tuple[Path, dict[str, list[tuple[int, float, float | None]]]]:
    """A file with every scalar form, three tags per step, a text tensor; and what it holds."""
    events = []
    expected: dict[str, list[tuple[int, float, float | None]]] = {
        "train/loss": [],
        "lr": [],
        "epoch_loss": [],
        "val/acc": [],
        "val/acc64": [],
        "tokens": [],
    }
    events.append(event(0, T0, text("args/text_summary", "lr=3e-4"), simple("train/loss", 0.0)))
    expected["train/loss"].append((0, 0.0, T0))
    for i in range(1, 40):
        step, wall = i * 50, T0 + i * 1.5
        loss, lr = 2.5 / i, 3e-4 * (1 - i / 40)
        values = [simple("train/loss", loss), simple("lr", lr), tensor_scalar("epoch_loss", loss * 2, first=i == 1)]
        expected["train/loss"].append((step, float32(loss), wall))
        expected["lr"].append((step, float32(lr), wall))
        expected["epoch_loss"].append((step, float32(loss * 2), wall))
        if i % 10 == 0:
            values.append(tensor_scalar("val/acc", i / 40, form="content32", first=i == 10))
            values.append(tensor_scalar("val/acc64", i / 41, form="content64", first=i == 10))
            values.append(tensor_scalar("tokens", i * 4096, form="int64_val", first=i == 10))
            expected["val/acc"].append((step, float32(i / 40), wall))
            expected["val/acc64"].append((step, i / 41, wall))
            expected["tokens"].append((step, float(i * 4096), wall))
        events.append(event(step, wall, *values))
    events.append(event(2**40, T0 + 99, tensor_scalar("double", 1 / 3, form="double_val")))
    expected["double"] = [(2**40, 1 / 3, T0 + 99)]
    return write_events(tmp_path / "run", events), expected


def _points(reader: EventFileReader) -> dict[str, list[tuple[int, float, float | None]]]:
    assert all(s.source == TENSORBOARD for s in reader.series())
    return {s.tag: s.points for s in reader.series()}


def test_every_scalar_form_reads_back_value_for_value(tmp_path: Path) -> None:
    path, expected = _run(tmp_path)
    reader = read_event_file(path.read_bytes())
    assert _points(reader) == expected
    assert reader.error is None and reader.bad_records == 0 and reader.file_version == "brain.Event:2"
    assert "args/text_summary" not in _points(reader)  # a text tensor is not a scalar


def test_the_data_checksum_when_asked_reads_the_same(tmp_path: Path) -> None:
    path, expected = _run(tmp_path)
    assert _points(read_event_file(path.read_bytes(), check_data=True)) == expected


def test_the_writers_file_name_says_its_host_and_pid(tmp_path: Path) -> None:
    path, _expected = _run(tmp_path)
    name = parse_event_file_name(path.name)
    assert name is not None and name.host == socket.gethostname() and name.pid == os.getpid()
    assert parse_event_file_name(str(write_events(tmp_path / "v2", [], suffix=".v2")))._replace(time=0, uid=0) == (
        EventFileName(0, socket.gethostname(), os.getpid(), 0, ".v2")
    )


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        (
            "events.out.tfevents.1628697775.DESKTOP-V1DB051.21044.31250.v2",
            (1628697775, "DESKTOP-V1DB051", 21044, 31250, ".v2"),
        ),
        ("events.out.tfevents.1742826235.DESKTOP-41L2EO3.107869.0", (1742826235, "DESKTOP-41L2EO3", 107869, 0, "")),
        (
            "runs/x/events.out.tfevents.1700000000.gpu-3.cluster.local.77.1",
            (1700000000, "gpu-3.cluster.local", 77, 1, ""),
        ),
        ("events.out.tfevents.1700000000.10.0.0.5.4242.0.mysuffix", (1700000000, "10.0.0.5", 4242, 0, ".mysuffix")),
        ("events.out.tfevents.1628697787.DESKTOP-V1DB051.profile-empty", None),  # the profiler's: no pid
        ("events.out.tfevents.notatime.h.1.2", None),
        ("metrics.csv", None),
    ],
)
def test_event_file_names(name: str, parsed: tuple[int, str, int, int, str] | None) -> None:
    assert parse_event_file_name(name) == (None if parsed is None else EventFileName(*parsed))


def _record_ends(data: bytes) -> list[int]:
    ends, pos = [], 0
    while pos < len(data):
        (length,) = struct.unpack_from("<Q", data, pos)
        pos += HEADER + length + 4
        ends.append(pos)
    assert pos == len(data)
    return ends


def test_a_file_cut_mid_record_reads_every_whole_record_and_no_error(tmp_path: Path) -> None:
    path, _expected = _run(tmp_path)
    data = path.read_bytes()
    ends = _record_ends(data)
    whole = read_event_file(data)
    for k in (1, 2, len(ends) - 2, len(ends) - 1):  # cut inside record k, at every byte of it
        before = _points(read_event_file(data[: ends[k - 1]]))
        for cut in range(ends[k - 1] + 1, ends[k]):
            reader = read_event_file(data[:cut])
            assert reader.error is None and reader.offset == ends[k - 1] and reader.bad_records == 0
            assert _points(reader) == before
    assert sum(len(p) for p in _points(whole).values()) > sum(
        len(p) for p in _points(read_event_file(data[:-1])).values()
    )


@pytest.mark.parametrize("chunk", [1, 7, 64, 4096])
def test_appended_bytes_are_read_as_they_come(tmp_path: Path, chunk: int) -> None:
    path, expected = _run(tmp_path)
    data = path.read_bytes()
    reader = EventFileReader()
    fed: list[tuple[str, tuple[int, float, float | None]]] = []
    for at in range(0, len(data), chunk):
        fed.extend(reader.feed(data[at : at + chunk]))
        assert reader.offset + reader.pending == min(at + chunk, len(data))
    assert _points(reader) == expected
    assert [p for tag, p in fed if tag == "lr"] == expected["lr"]  # each point returned once, in order
    assert len(fed) == sum(len(p) for p in expected.values())


def test_a_damaged_length_stops_reading_there_with_a_message(tmp_path: Path) -> None:
    path, expected = _run(tmp_path)
    data = bytearray(path.read_bytes())
    ends = _record_ends(bytes(data))
    data[ends[5] + 9] ^= 0x40  # the length CRC of record 6 (0: file_version, 1: step 0, 2..: steps 50..)
    reader = EventFileReader()
    reader.feed(bytes(data[: ends[5] + 30]))
    assert reader.error == (
        f"the event file is damaged at byte {ends[5]} (a record's length fails its checksum): read up to there"
    )
    assert _points(reader)["lr"] == expected["lr"][:4] and reader.offset == ends[5]
    assert reader.feed(bytes(data[ends[5] + 30 :])) == [] and _points(reader)["lr"] == expected["lr"][:4]


def test_a_damaged_record_is_left_out_when_its_checksum_is_checked(tmp_path: Path) -> None:
    path, expected = _run(tmp_path)
    data = bytearray(path.read_bytes())
    ends = _record_ends(bytes(data))
    data[ends[3] - 6] ^= 0x01  # inside the data of record 3 (step 100)
    checked = read_event_file(bytes(data), check_data=True)
    assert checked.error is None and checked.bad_records == 1
    assert _points(checked)["lr"] == expected["lr"][:1] + expected["lr"][2:]


def test_a_record_that_is_not_an_event_is_skipped(tmp_path: Path) -> None:
    path, expected = _run(tmp_path)
    data = path.read_bytes()
    ends = _record_ends(data)
    spliced = data[: ends[2]] + frame(b"\x0a\xff\x01garbage") + data[ends[2] :]
    reader = read_event_file(spliced)
    assert reader.bad_records == 1 and reader.error is None and _points(reader) == expected


def test_the_splitter_holds_a_partial_header() -> None:
    splitter = RecordSplitter(check_data=True)
    record = frame(b"abc")
    assert splitter.feed(record[:5]) == [] and splitter.pending == 5
    assert splitter.feed(record[5:] + record) == [b"abc", b"abc"] and splitter.pending == 0
