"""gpu_tui.core.metrics.nvsmi against real nvidia-smi captures and the FIELD_NOTES corpus (no mocks).

- captures: tests/data/nvidia-smi/captures/ (10 real machines, Linux and Windows, drivers
  590-610), read through tests/nvsmi_captures.py;
- corpus: tests/data/nvidia-smi/cases/ (`<name>.txt` + `<name>.expected.json`, see its README);
- FrameAssembler behaviour on -lms streams; hypothesis: the parsers never raise.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tui.core.metrics import nvsmi
from gpu_tui.core.metrics.nvsmi import (
    COMPUTE_APPS_FIELDS,
    LEGACY_QUERY_FIELDS,
    QUERY_FIELDS,
    FrameAssembler,
    compute_apps_argv,
    detect_error,
    parse_compute_apps,
    parse_row,
    parse_rows,
    parse_value,
    parse_version,
    query_gpu_argv,
    to_float,
    to_int,
    unsupported_field,
)
from gpu_tui.core.models import GpuError, GpuErrorKind, GpuFrame, GpuProcess, GpuSample

TESTS_DIR = Path(__file__).resolve().parents[1]
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from nvsmi_captures import CsvTable, capture_files, find_section, load_capture  # noqa: E402

CASES_DIR = TESTS_DIR / "data" / "nvidia-smi" / "cases"
CAPTURES = capture_files()
CAPTURE_IDS = [p.name.removesuffix(".txt") for p in CAPTURES]
PHASES = ("idle", "load")

# QUERY_FIELDS -> (GpuSample attribute, how the capture's value converts)
ATTRS: dict[str, tuple[str, type]] = {
    "index": ("index", int),
    "uuid": ("uuid", str),
    "name": ("name", str),
    "utilization.gpu": ("utilization_gpu", int),
    "memory.used": ("memory_used_mib", int),
    "memory.total": ("memory_total_mib", int),
    "temperature.gpu": ("temperature_c", int),
    "power.draw": ("power_draw_w", float),
    "power.limit": ("power_limit_w", float),
    "fan.speed": ("fan_speed_percent", int),
    "mig.mode.current": ("mig_mode", str),
}
SAMPLE_KEYS = [attr for attr, _ in ATTRS.values()]

# What each capture really reports, read by eye from the files (not from the parser).
FACTS: dict[str, dict[str, object]] = {
    "linux-x86_64__nvidia-geforce-rtx-2080-super__595.71.05": dict(
        name="NVIDIA GeForce RTX 2080 SUPER",
        mig=None,
        fan=True,
        util=True,
        driver="595.71.05",
        cuda="13.2",
        load_procs=2,
        proc_mem=True,
    ),
    "linux-x86_64__nvidia-geforce-rtx-2080-super__610.57.04": dict(
        name="NVIDIA GeForce RTX 2080 SUPER",
        mig=None,
        fan=True,
        util=True,
        driver="610.57.04",
        cuda="13.3",
        load_procs=2,
        proc_mem=True,
    ),
    "linux-x86_64__nvidia-geforce-rtx-4080-super__595.71.05": dict(
        name="NVIDIA GeForce RTX 4080 SUPER",
        mig=None,
        fan=True,
        util=True,
        driver="595.71.05",
        cuda="13.2",
        load_procs=3,
        proc_mem=True,
    ),
    "linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01": dict(
        name="NVIDIA H100 80GB HBM3",
        mig="Disabled",
        fan=False,
        util=True,
        driver="590.48.01",
        cuda="13.1",
        load_procs=3,
        proc_mem=True,
    ),
    "linux-x86_64__nvidia-h100-mig__590.48.01": dict(
        name="NVIDIA H100 80GB HBM3",
        mig="Enabled",
        fan=False,
        util=False,
        driver="590.48.01",
        cuda="13.1",
        load_procs=3,
        proc_mem=True,
    ),
    "linux-x86_64__nvidia-h200-mig__590.48.01": dict(
        name="NVIDIA H200",
        mig="Enabled",
        fan=False,
        util=False,
        driver="590.48.01",
        cuda="13.1",
        load_procs=3,
        proc_mem=True,
    ),
    "linux-x86_64__nvidia-h200__590.48.01": dict(
        name="NVIDIA H200",
        mig="Disabled",
        fan=False,
        util=True,
        driver="590.48.01",
        cuda="13.1",
        load_procs=3,
        proc_mem=True,
    ),
    "linux-x86_64__nvidia-l40s__595.80": dict(
        name="NVIDIA L40S", mig=None, fan=False, util=True, driver="595.80", cuda="13.2", load_procs=2, proc_mem=True
    ),
    "windows-x86_64__nvidia-geforce-rtx-2080-super__591.86": dict(
        name="NVIDIA GeForce RTX 2080 SUPER",
        mig=None,
        fan=True,
        util=True,
        driver="591.86",
        cuda="13.1",
        load_procs=12,
        proc_mem=False,
    ),
    "windows-x86_64__nvidia-geforce-rtx-2080-super__610.62": dict(
        name="NVIDIA GeForce RTX 2080 SUPER",
        mig=None,
        fan=True,
        util=True,
        driver="610.62",
        cuda="13.3",
        load_procs=21,
        proc_mem=False,
    ),
}

_SECTIONS: dict[Path, list] = {}


def sections(path: Path) -> list:
    if path not in _SECTIONS:
        _SECTIONS[path] = load_capture(path)
    return _SECTIONS[path]


def section_body(path: Path, phase: str, what: str) -> str:
    section = find_section(sections(path), phase, what)
    assert section is not None, f"{path.name}: no {phase} :: {what}"
    return section.body


def capture_table(path: Path, phase: str, what: str) -> CsvTable:
    return CsvTable.from_text(section_body(path, phase, what))


def expected_value(value: str, unit: str | None, kind: type) -> object:
    """The capture's value as it must come out: None where bracketed, units dropped."""
    if value.startswith("[") and value.endswith("]"):
        return None
    if unit:
        assert value.endswith(" " + unit), (value, unit)
        value = value[: -len(unit) - 1]
    return kind(value)


def as_dict(sample: GpuSample) -> dict[str, object]:
    return {key: getattr(sample, key) for key in SAMPLE_KEYS}


def read_raw(path: Path) -> str:
    return path.read_bytes().decode("utf-8")  # keep \r\n as the machine sent it


# --------------------------------------------------------------------------- argv and fields


def test_query_fields_are_the_contracted_ones() -> None:
    assert QUERY_FIELDS == (
        "index",
        "uuid",
        "name",
        "utilization.gpu",
        "memory.used",
        "memory.total",
        "temperature.gpu",
        "power.draw",
        "power.limit",
        "fan.speed",
        "mig.mode.current",
    )
    assert LEGACY_QUERY_FIELDS == QUERY_FIELDS[:-1]
    assert COMPUTE_APPS_FIELDS == ("pid", "process_name", "used_gpu_memory", "gpu_uuid")
    assert set(ATTRS) == set(QUERY_FIELDS)


def test_argv() -> None:
    fields = ",".join(QUERY_FIELDS)
    assert query_gpu_argv() == ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"]
    assert query_gpu_argv(1000) == [
        "nvidia-smi",
        f"--query-gpu={fields}",
        "--format=csv,noheader,nounits",
        "-lms",
        "1000",
    ]
    assert query_gpu_argv(500, fields=LEGACY_QUERY_FIELDS)[1] == ("--query-gpu=" + ",".join(LEGACY_QUERY_FIELDS))
    assert compute_apps_argv() == [
        "nvidia-smi",
        "--query-compute-apps=pid,process_name,used_gpu_memory,gpu_uuid",
        "--format=csv,noheader,nounits",
    ]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "1000"])
def test_argv_refuses_bad_interval(bad: object) -> None:
    with pytest.raises(ValueError):
        query_gpu_argv(bad)  # type: ignore[arg-type]


def test_argv_refuses_other_fields() -> None:
    with pytest.raises(ValueError):
        query_gpu_argv(fields=("index", "name"))


def test_public_api_is_exported() -> None:
    for name in nvsmi.__all__:
        assert hasattr(nvsmi, name), name


# --------------------------------------------------------------------------- real captures


def test_captures_cover_linux_and_windows() -> None:
    assert len(CAPTURES) == len(FACTS) == 10
    assert set(CAPTURE_IDS) == set(FACTS)
    assert any(i.startswith("windows-") for i in CAPTURE_IDS)


@pytest.mark.parametrize("path", CAPTURES, ids=CAPTURE_IDS)
def test_every_query_field_is_documented_by_the_driver(path: Path) -> None:
    help_gpu = section_body(path, "capabilities", "help-query-gpu")
    help_apps = section_body(path, "capabilities", "help-query-compute-apps")
    for help_text, fields in ((help_gpu, QUERY_FIELDS), (help_apps, COMPUTE_APPS_FIELDS)):
        for field in fields:
            assert f'"{field}"' in help_text, f"{path.name}: {field} missing"


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("path", CAPTURES, ids=CAPTURE_IDS)
def test_capture_rows_nounits(path: Path, phase: str) -> None:
    table = capture_table(path, phase, "query-gpu")
    assert len(table.rows) == 1
    for r in range(len(table.rows)):
        line = ", ".join(table.values(r, QUERY_FIELDS, units=False))
        sample = parse_row(line)
        assert sample is not None, line
        for field, (attr, kind) in ATTRS.items():
            want = expected_value(table.rows[r][table.column(field)], table.unit(field), kind)
            assert getattr(sample, attr) == want, (field, line)
        # the same rows as the stream sees them
        assert parse_rows(line + "\n") == [sample]
        assert detect_error(line + "\n", 0) is None


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("path", CAPTURES, ids=CAPTURE_IDS)
def test_capture_rows_with_units(path: Path, phase: str) -> None:
    table = capture_table(path, phase, "query-gpu")
    with_units = ", ".join(table.values(0, QUERY_FIELDS, units=True))
    nounits = ", ".join(table.values(0, QUERY_FIELDS, units=False))
    assert parse_row(with_units) == parse_row(nounits)
    for field, (_attr, kind) in ATTRS.items():
        if kind is str:
            continue
        token = table.rows[0][table.column(field)]
        want = expected_value(token, table.unit(field), kind)
        convert = to_float if kind is float else to_int
        got = convert(token)
        assert got == want and type(got) is type(want), (field, token)


@pytest.mark.parametrize("path", CAPTURES, ids=CAPTURE_IDS)
def test_capture_facts(path: Path) -> None:
    facts = FACTS[path.name.removesuffix(".txt")]
    for phase in PHASES:
        table = capture_table(path, phase, "query-gpu")
        sample = parse_row(", ".join(table.values(0, QUERY_FIELDS, units=False)))
        assert sample is not None
        assert sample.index == 0
        assert sample.uuid == "GPU-00000000-0000-0000-0000-000000000000"
        assert sample.name == facts["name"]
        assert sample.mig_mode == facts["mig"]
        assert (sample.fan_speed_percent is not None) == facts["fan"]
        # MIG mode: the GPU reports no utilisation (None, never 0), but memory and power
        assert (sample.utilization_gpu is not None) == facts["util"]
        assert sample.memory_used_mib is not None and sample.memory_total_mib
        assert sample.temperature_c is not None
        assert sample.power_draw_w is not None and sample.power_limit_w is not None
        assert sample.memory_percent is not None


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("path", CAPTURES, ids=CAPTURE_IDS)
def test_capture_compute_apps(path: Path, phase: str) -> None:
    table = capture_table(path, phase, "query-compute-apps")
    text = table.render(COMPUTE_APPS_FIELDS, header=False, units=False)
    processes = parse_compute_apps(text)
    assert len(processes) == len(table.rows)
    for r, proc in enumerate(processes):
        pid, name, memory, uuid = table.values(r, COMPUTE_APPS_FIELDS, units=True)
        assert proc == GpuProcess(
            pid=int(pid),
            process_name=name,
            used_memory_mib=expected_value(memory, table.unit("used_gpu_memory"), int),
            gpu_uuid=uuid,
        )
    # with the header (--format=csv,nounits) and with units (--format=csv,noheader)
    assert parse_compute_apps(table.render(COMPUTE_APPS_FIELDS, units=False)) == processes
    assert parse_compute_apps(table.render(COMPUTE_APPS_FIELDS, header=False)) == processes
    facts = FACTS[path.name.removesuffix(".txt")]
    if phase == "load":
        assert len(processes) == facts["load_procs"]
        assert all((p.used_memory_mib is not None) == facts["proc_mem"] for p in processes)


@pytest.mark.parametrize("path", CAPTURES, ids=CAPTURE_IDS)
def test_capture_versions(path: Path) -> None:
    facts = FACTS[path.name.removesuffix(".txt")]
    want = {"driver_version": facts["driver"], "cuda_version": facts["cuda"]}
    assert parse_version(section_body(path, "capabilities", "version")) == want
    for phase in PHASES:
        assert parse_version(section_body(path, phase, "nvidia-smi (default table)")) == want
        assert parse_version(section_body(path, phase, "query (-q)")) == want


def test_610_renames_are_in_the_captures() -> None:
    """610 renames Driver/CUDA Version to KMD / CUDA UMD Version; the old keys say Deprecated."""
    path = next(p for p in CAPTURES if "610.57.04" in p.name)
    version = section_body(path, "capabilities", "version")
    assert 'DRIVER version      : Deprecated, see "KMD version" instead' in version
    table = section_body(path, "idle", "nvidia-smi (default table)")
    assert "KMD Version: 610.57.04" in table and "CUDA UMD Version: 13.3" in table
    assert "Driver Version" not in table
    assert parse_version(version) == {"driver_version": "610.57.04", "cuda_version": "13.3"}


# --------------------------------------------------------------------------- corpus

CASE_FILES = sorted(CASES_DIR.rglob("*.txt"))
CASE_IDS = [str(p.relative_to(CASES_DIR).with_suffix("")) for p in CASE_FILES]


def load_case(path: Path) -> tuple[str, dict]:
    expected = json.loads(path.with_name(path.stem + ".expected.json").read_text("utf-8"))
    return read_raw(path), expected


def check_error(got: GpuError | None, want: dict | None) -> None:
    if want is None:
        assert got is None, got
        return
    assert got is not None
    assert got.kind is GpuErrorKind[want["kind"]]
    for part in want["reason_contains"]:
        assert part in got.reason, (part, got.reason)
    assert got.reason and "\n" not in got.reason and len(got.reason) <= 120
    if "raw" in want:
        assert got.raw == want["raw"]


def event(result: GpuFrame | GpuError) -> dict:
    if isinstance(result, GpuError):
        return {"error": result.kind.name}
    return {"frame": [g.index for g in result.gpus], "utilization_gpu": [g.utilization_gpu for g in result.gpus]}


def test_corpus_is_complete() -> None:
    assert len(CASE_FILES) >= 50
    for path in CASE_FILES:
        assert path.with_name(path.stem + ".expected.json").is_file(), path
    for path in CASES_DIR.rglob("*.expected.json"):
        assert path.with_name(path.name.removesuffix(".expected.json") + ".txt").is_file()
    kinds = set()
    for path in CASE_FILES:
        _, expected = load_case(path)
        if expected.get("error"):
            kinds.add(expected["error"]["kind"])
    # NO_JOB is the monitor's own (a login node with no running SLURM job): no nvidia-smi output says it
    read_from_output = {k.name for k in GpuErrorKind if k is not GpuErrorKind.NO_JOB}
    assert kinds == read_from_output, "every error kind nvidia-smi can show has a corpus case"


@pytest.mark.parametrize("path", CASE_FILES, ids=CASE_IDS)
def test_corpus_case(path: Path) -> None:
    text, expected = load_case(path)
    parser = expected["parser"]
    if parser == "query-gpu":
        assert [as_dict(s) for s in parse_rows(text)] == expected["gpus"]
        check_error(detect_error(text, expected.get("exit_status")), expected["error"])
    elif parser == "stream":
        ticks = itertools.count(1000.0)
        assembler = FrameAssembler(clock=lambda: next(ticks))
        assembler.expected = expected["expected"]
        results = [r for r in map(assembler.feed, text.splitlines()) if r is not None]
        assert [event(r) for r in results] == expected["events"]
        frames = [r for r in results if isinstance(r, GpuFrame)]
        assert [f.taken_at for f in frames] == sorted(f.taken_at for f in frames)
        last = assembler.flush()
        assert (event(last) if last else None) == expected["flush"]
    elif parser == "compute-apps":
        got = [
            {"pid": p.pid, "process_name": p.process_name, "used_memory_mib": p.used_memory_mib, "gpu_uuid": p.gpu_uuid}
            for p in parse_compute_apps(text)
        ]
        assert got == expected["processes"]
    elif parser == "version":
        assert parse_version(text) == {
            "driver_version": expected["driver_version"],
            "cuda_version": expected["cuda_version"],
        }
    else:
        pytest.fail(f"unknown parser {parser!r}")


def test_unknown_field_names_the_field() -> None:
    text, _ = load_case(CASES_DIR / "errors" / "unknown-field.txt")
    assert unsupported_field(text) == "mig.mode.current"
    assert unsupported_field("0, GPU-1, x") is None


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    "token",
    [
        "[N/A]",
        "[Not Supported]",
        "[Unknown Error]",
        "[Requested functionality has been deprecated]",
        "[Insufficient Permissions]",
        "[GPU is lost]",
        "N/A",
        " N/A ",
        "",
        "   ",
        " [N/A]\r",
    ],
)
def test_parse_value_missing(token: str) -> None:
    assert parse_value(token) is None
    assert to_int(token) is None
    assert to_float(token) is None


@pytest.mark.parametrize(
    ("token", "value"),
    [
        ("Disabled", "Disabled"),
        (" Enabled ", "Enabled"),
        ("NVIDIA H200", "NVIDIA H200"),
        ("0", "0"),
        ("N/A-ish", "N/A-ish"),
    ],
)
def test_parse_value_present(token: str, value: str) -> None:
    assert parse_value(token) == value


@pytest.mark.parametrize(
    ("token", "as_int", "as_float"),
    [
        ("87", 87, 87.0),
        ("0", 0, 0.0),
        ("87 %", 87, 87.0),
        ("87%", 87, 87.0),
        ("20480 MiB", 20480, 20480.0),
        ("281.50 W", 282, 281.5),
        ("281.50", 282, 281.5),
        ("1980 MHz", 1980, 1980.0),
        (" 66 ", 66, 66.0),
        ("-5", -5, -5.0),
        ("45.4", 45, 45.4),
        ("abc", None, None),
        ("12abc3", None, None),
        ("1e5", None, None),
        ("nan", None, None),
        ("inf", None, None),
        ("1_000", None, None),
        ("\u00b2", None, None),
        ("\u0663", None, None),
        ("9" * 40, None, None),
        ("87 % %", None, None),
        ("W", None, None),
    ],
)
def test_numeric_converters(token: str, as_int: int | None, as_float: float | None) -> None:
    got_int, got_float = to_int(token), to_float(token)
    assert got_int == as_int and (got_int is None or type(got_int) is int)
    assert got_float == as_float and (got_float is None or type(got_float) is float)


# --------------------------------------------------------------------------- rows


def test_parse_row_refuses_non_rows() -> None:
    good = "0, GPU-1, NVIDIA L4, 1, 2, 3, 4, 5.00, 6.00, [N/A], [N/A]"
    assert parse_row(good) is not None
    assert parse_row(good + ", extra") is None  # more fields than asked: refuse, do not shift
    assert parse_row("0, GPU-1, NVIDIA L4, 1, 2, 3, 4, 5.00, 6.00") is None  # too few
    assert parse_row(good.replace("0,", "[N/A],", 1)) is None  # a row needs an int index
    assert parse_row(good.replace("0,", "x,", 1)) is None
    assert parse_row(good.replace("0,", "-1,", 1)) is None
    assert parse_row(good.replace(", ", ",")) is None  # not nvidia-smi's separator
    assert parse_row("") is None
    assert parse_row("No devices were found") is None


def test_parse_row_keeps_names_and_strips_line_endings() -> None:
    sample = parse_row("2, GPU-9, GeForce GTX 1080 Ti, 1, 2, 3, 4, 5.00, 6.00, 7, [N/A]\r\n")
    assert sample == GpuSample(2, "GPU-9", "GeForce GTX 1080 Ti", 1, 2, 3, 4, 5.0, 6.0, 7, None)


def test_detect_error_none_cases() -> None:
    assert detect_error("") is None
    assert detect_error("", 0) is None
    assert detect_error("\n\n") is None
    assert detect_error("Event: something harmless") is None  # unknown text, no failure status
    assert detect_error("0, GPU-1, NVIDIA L4, 1, 2, 3, 4, 5.00, 6.00, [N/A], [N/A]", 1) is None


def test_detect_error_truncates_long_lines() -> None:
    line = "weird failure " + "x" * 500
    error = detect_error(line, 3)
    assert error is not None and error.kind is GpuErrorKind.UNKNOWN
    assert len(error.reason) <= 120 and error.raw == line


# --------------------------------------------------------------------------- FrameAssembler


def real_rows(count: int, phase: str = "load") -> list[str]:
    """`count` rows built from the H200 capture's own row (nounits), indexes 0..count-1."""
    path = next(p for p in CAPTURES if "h200__" in p.name)
    values = capture_table(path, phase, "query-gpu").values(0, QUERY_FIELDS, units=False)
    return [", ".join([str(i), *values[1:]]) for i in range(count)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_assembler_emits_complete_frames_at_once_when_expected_is_known() -> None:
    clock = Clock()
    assembler = FrameAssembler(clock)
    assembler.expected = 8
    rows = real_rows(8)
    for tick in range(3):
        clock.now = 100.0 + tick
        results = [assembler.feed(line) for line in rows]
        assert results[:-1] == [None] * 7
        frame = results[-1]
        assert isinstance(frame, GpuFrame)
        assert frame.taken_at == 100.0 + tick
        assert isinstance(frame.gpus, tuple)
        assert [g.index for g in frame.gpus] == list(range(8))
        assert all(g.name == "NVIDIA H200" and g.utilization_gpu == 100 for g in frame.gpus)
    assert assembler.flush() is None


def test_assembler_learns_the_size_from_the_first_tick() -> None:
    assembler = FrameAssembler(Clock())
    assert assembler.expected is None
    rows = real_rows(4)
    assert [assembler.feed(line) for line in rows] == [None] * 4
    first = assembler.feed(rows[0])  # the next tick's index 0 closes the first tick
    assert isinstance(first, GpuFrame) and len(first.gpus) == 4
    assert assembler.expected == 4
    results = [assembler.feed(line) for line in rows[1:]]
    assert results[:-1] == [None, None]
    assert isinstance(results[-1], GpuFrame) and len(results[-1].gpus) == 4


def test_assembler_skips_stray_lines_inside_and_between_ticks() -> None:
    assembler = FrameAssembler(Clock())
    assembler.expected = 2
    rows = real_rows(2)
    stream = [
        rows[0],
        "",
        "Event: Clocks Throttle Reasons changed",
        rows[1],
        "   ",
        "index, uuid, name",
        rows[0],
        "\r",
        rows[1],
    ]
    results = [r for r in map(assembler.feed, stream) if r is not None]
    assert len(results) == 2 and all(isinstance(r, GpuFrame) for r in results)
    assert all(len(r.gpus) == 2 for r in results)


def test_assembler_gpu_disappears() -> None:
    assembler = FrameAssembler(Clock())
    assembler.expected = 8
    eight = real_rows(8)
    seven = eight[:7]  # GPU 7 gone
    assert isinstance([assembler.feed(x) for x in eight][-1], GpuFrame)
    # 7 rows never reach 8: the tick is emitted when the next one starts, then 7 is expected
    assert [assembler.feed(x) for x in seven] == [None] * 7
    late = assembler.feed(seven[0])
    assert isinstance(late, GpuFrame) and [g.index for g in late.gpus] == list(range(7))
    assert assembler.expected == 7
    results = [assembler.feed(x) for x in seven[1:]]
    assert results[:-1] == [None] * 5
    assert isinstance(results[-1], GpuFrame) and len(results[-1].gpus) == 7


def test_assembler_error_line_mid_stream() -> None:
    assembler = FrameAssembler(Clock())
    assembler.expected = 2
    rows = real_rows(2)
    assert assembler.feed(rows[0]) is None
    error = assembler.feed("Unable to determine the device handle for GPU0000:83:00.0: GPU is lost.")
    assert isinstance(error, GpuError) and error.kind is GpuErrorKind.GPU_LOST
    assert "0000:83:00.0" in error.reason
    frame = assembler.feed(rows[1])  # the tick goes on
    assert isinstance(frame, GpuFrame) and len(frame.gpus) == 2
    failed = assembler.feed("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.")
    assert isinstance(failed, GpuError) and failed.kind is GpuErrorKind.DRIVER_FAILED


def test_assembler_flush_returns_the_partial_tick_and_resets() -> None:
    assembler = FrameAssembler(Clock())
    rows = real_rows(3)
    assert assembler.flush() is None
    for line in rows[:2]:
        assembler.feed(line)
    partial = assembler.flush()
    assert isinstance(partial, GpuFrame) and [g.index for g in partial.gpus] == [0, 1]
    assert assembler.flush() is None
    # a restarted stream starts a fresh tick: index 0 does not close anything
    assert assembler.feed(rows[0]) is None


def test_assembler_is_cheap() -> None:
    """Not a timing test: one feed per line, and no more clock reads than frames."""
    calls = 0

    def clock() -> float:
        nonlocal calls
        calls += 1
        return 0.0

    assembler = FrameAssembler(clock)
    rows = real_rows(8)
    frames = sum(isinstance(assembler.feed(line), GpuFrame) for _ in range(100) for line in rows)
    assert frames == 100  # the first tick leaves late (when tick 2 starts), none is lost
    assert calls == frames


# --------------------------------------------------------------------------- properties

TOKENS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            "[N/A]",
            "[Not Supported]",
            "N/A",
            "",
            "87 %",
            "281.50 W",
            "0",
            "-1",
            "20480 MiB",
            "GPU-1",
            "NVIDIA, H100",
            "\r",
            "9" * 30,
        ]
    ),
)
ROWISH = st.lists(TOKENS, min_size=9, max_size=13).map(", ".join)
LINES = st.one_of(st.text(), ROWISH)


@settings(max_examples=300)
@given(LINES)
def test_parse_row_never_raises(line: str) -> None:
    sample = parse_row(line)
    assert sample is None or (isinstance(sample, GpuSample) and sample.index >= 0)


@settings(max_examples=300)
@given(st.text())
def test_parse_value_never_raises(token: str) -> None:
    value = parse_value(token)
    assert value is None or (value and value == value.strip())
    for got in (to_int(token), to_float(token)):
        assert got is None or (isinstance(got, int | float) and math.isfinite(got))


@settings(max_examples=200)
@given(st.text(), st.one_of(st.none(), st.integers(-300, 300)))
def test_detect_error_never_raises(text: str, exit_status: int | None) -> None:
    error = detect_error(text, exit_status)
    assert error is None or (isinstance(error, GpuError) and error.reason)


@settings(max_examples=200)
@given(st.lists(LINES, max_size=6).map("\n".join))
def test_parse_compute_apps_never_raises(text: str) -> None:
    assert all(isinstance(p, GpuProcess) for p in parse_compute_apps(text))


@settings(max_examples=200)
@given(st.lists(st.one_of(LINES, st.sampled_from(real_rows(4))), max_size=40), st.one_of(st.none(), st.integers(0, 5)))
def test_assembler_never_raises(lines: list[str], expected: int | None) -> None:
    assembler = FrameAssembler(lambda: 1.0)
    assembler.expected = expected
    for result in [*map(assembler.feed, lines), assembler.flush()]:
        if isinstance(result, GpuFrame):
            indexes = [g.index for g in result.gpus]
            assert indexes and indexes == sorted(set(indexes))


MISSING = st.sampled_from(["[N/A]", "[Not Supported]", "N/A", "[Unknown Error]"])
WORD = (
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 -", min_size=1, max_size=20)
    .map(str.strip)
    .filter(lambda s: s and s != "N/A")
)


@st.composite
def rows_and_samples(draw: st.DrawFn) -> tuple[str, GpuSample]:
    def opt_int() -> tuple[str, int | None]:
        if draw(st.booleans()):
            return draw(MISSING), None
        n = draw(st.integers(0, 10**6))
        return str(n), n

    def opt_float() -> tuple[str, float | None]:
        if draw(st.booleans()):
            return draw(MISSING), None
        text = f"{draw(st.integers(0, 10**7)) / 100:.2f}"
        return text, float(text)

    index = draw(st.integers(0, 63))
    uuid, name = draw(WORD), draw(WORD)
    ints = [opt_int() for _ in range(4)]
    floats = [opt_float() for _ in range(2)]
    fan = opt_int()
    mig = draw(st.sampled_from([("Enabled", "Enabled"), ("Disabled", "Disabled"), ("[N/A]", None)]))
    tokens = [str(index), uuid, name, *(t for t, _ in ints), *(t for t, _ in floats)]
    tokens += [fan[0], mig[0]]
    sample = GpuSample(index, uuid, name, *(v for _, v in ints), *(v for _, v in floats), fan[1], mig[1])
    return ", ".join(tokens), sample


@settings(max_examples=300)
@given(rows_and_samples())
def test_parse_row_round_trip(case: tuple[str, GpuSample]) -> None:
    line, sample = case
    assert parse_row(line) == sample


@settings(max_examples=300)
@given(
    st.lists(
        st.one_of(LINES, st.sampled_from(real_rows(4)), st.sampled_from(["\r", "", "No devices were found"])),
        max_size=30,
    ),
    st.lists(st.integers(0, 4000), max_size=12),
    st.one_of(st.none(), st.integers(0, 5)),
    st.sampled_from(["\n", "\r\n"]),
)
def test_feed_chunk_is_feed_over_lines(lines: list[str], cuts: list[int], expected: int | None, eol: str) -> None:
    """The chunk API gives what `feed` gives line by line, wherever the stream is cut."""
    lines = [x for line in lines for x in line.replace("\r\n", "\n").split("\n")]  # one line each
    text = "".join(line + eol for line in lines)
    by_line = FrameAssembler(lambda: 1.0)
    by_line.expected = expected
    want = [r for r in map(by_line.feed, lines) if r is not None]
    by_chunk = FrameAssembler(lambda: 1.0)
    by_chunk.expected = expected
    got = []
    bounds = sorted({0, len(text), *(c for c in cuts if c < len(text))})
    for a, b in itertools.pairwise(bounds):
        got += by_chunk.feed_chunk(text[a:b])
    assert by_chunk.rest() == ""
    assert got == want
    assert by_chunk.flush() == by_line.flush()


def test_feed_chunk_keeps_a_cut_line_for_the_next_chunk() -> None:
    rows = real_rows(2)
    assembler = FrameAssembler(lambda: 5.0)
    assembler.expected = 2
    text = "\n".join(rows) + "\n"
    assert assembler.feed_chunk(text[:10]) == []
    assert assembler.feed_chunk(text[10:-3]) == []
    (frame,) = assembler.feed_chunk(text[-3:])
    assert isinstance(frame, GpuFrame) and [g.index for g in frame.gpus] == [0, 1]
    assert frame.gpus == tuple(parse_row(r) for r in rows)
    assert assembler.feed_chunk("0, GPU-x") == [] and assembler.rest() == "0, GPU-x"
    assert assembler.rest() == ""
