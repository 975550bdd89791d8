"""TensorBoard event files (`events.out.tfevents.*`): the scalars, read as the file grows.

Each TFRecord (core/runfiles/tfrecord.py) holds one Event message (tensorboard's
compat/proto/event.proto): wall_time (double, field 1), step (int64, 2), file_version (string,
3), summary (5) with repeated Value {tag 1, simple_value float 2, tensor 8, metadata 9}.

Two ways a scalar is written, both read:
- `simple_value`: TF1's `tf.summary.scalar`, PyTorch's and tensorboardX's SummaryWriter
  (`add_scalar`), HF Trainer's TensorBoard callback through them;
- a one-element `tensor` (float_val, double_val, the int fields, half_val, or tensor_content
  by dtype) on a tag whose metadata names the plugin `scalars` (or data_class SCALAR): TF2,
  Keras, tensorboard's newer writers. The metadata comes with a tag's first value only, so
  what each tag is is remembered for the file's life. Tensors of other plugins (text,
  histograms, images, hparams) are not scalars and are left out.

The file's name says who wrote it: `events.out.tfevents.<time>.<host>.<pid>.<n>[suffix]`
(`parse_event_file_name`).
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING, NamedTuple

from gpu_tui.core.runfiles.model import TENSORBOARD, SeriesSet
from gpu_tui.core.runfiles.protowire import (
    FIXED32,
    FIXED64,
    LENGTH,
    VARINT,
    WireError,
    as_double,
    as_float,
    fields,
    packed_fixed,
    packed_varints,
    signed64,
)
from gpu_tui.core.runfiles.tfrecord import RecordSplitter

if TYPE_CHECKING:
    from gpu_tui.core.runfiles.model import Point, Series

__all__ = ["EventFileName", "EventFileReader", "parse_event_file_name", "read_event_file", "SCALARS_PLUGIN"]

SCALARS_PLUGIN = "scalars"
_DATA_CLASS_SCALAR = 1
_PREFIX = "events.out.tfevents."

# DataType (tensorboard/compat/proto/types.proto) -> struct code of one tensor_content element
_CONTENT = {1: "f", 2: "d", 3: "i", 4: "B", 5: "h", 6: "b", 9: "q", 10: "?", 17: "H", 19: "e", 22: "I", 23: "Q"}
_BFLOAT16, _HALF = 14, 19
# TensorProto's value fields (tensorboard/compat/proto/tensor.proto)
_FLOAT_VAL, _DOUBLE_VAL, _INT_VAL, _INT64_VAL = 5, 6, 7, 10
_BOOL_VAL, _HALF_VAL, _UINT32_VAL, _UINT64_VAL = 11, 13, 16, 17
_SIGNED_VARINTS = (_INT_VAL, _INT64_VAL)
_PLAIN_VARINTS = (_BOOL_VAL, _UINT32_VAL, _UINT64_VAL, _HALF_VAL)


class EventFileName(NamedTuple):
    """What an event file's name says: the writer's start time (whole seconds), host, pid,
    the writer's number within that process, and the rest (`.v2`, a user's suffix)."""

    time: int
    host: str
    pid: int
    uid: int
    suffix: str


def parse_event_file_name(name: str) -> EventFileName | None:
    """`events.out.tfevents.1742826235.node-3.cluster.107869.0.v2` -> (1742826235,
    "node-3.cluster", 107869, 0, ".v2"); None for any other name. A host name may hold dots
    (and all-digit labels), so pid and number are the last two all-digit parts after it."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    if not base.startswith(_PREFIX):
        return None
    parts = base[len(_PREFIX) :].split(".")
    if len(parts) < 4 or not parts[0].isdigit():
        return None
    for i in range(len(parts) - 2, 1, -1):
        if parts[i].isdigit() and parts[i + 1].isdigit():
            host = ".".join(parts[1:i])
            suffix = "".join("." + p for p in parts[i + 2 :])
            return EventFileName(int(parts[0]), host, int(parts[i]), int(parts[i + 1]), suffix)
    return None


def _plugin_of(metadata: bytes) -> tuple[str, int]:
    plugin, data_class = "", 0
    for number, wire, raw in fields(metadata):
        if number == 1 and wire == LENGTH and isinstance(raw, bytes):
            for n2, w2, r2 in fields(raw):
                if n2 == 1 and w2 == LENGTH and isinstance(r2, bytes):
                    plugin = r2.decode("utf-8", "replace")
        elif number == 4 and wire == VARINT and isinstance(raw, int):
            data_class = raw
    return plugin, data_class


def _is_scalar_shape(shape: bytes) -> bool:
    for number, wire, raw in fields(shape):
        if number == 2 and wire == LENGTH and isinstance(raw, bytes):  # a dim
            size = 0
            for n2, w2, r2 in fields(raw):
                if n2 == 1 and w2 == VARINT and isinstance(r2, int):
                    size = signed64(r2)
            if size != 1:
                return False
        elif number == 3 and wire == VARINT and raw:  # unknown_rank
            return False
    return True


def _half(bits: int, dtype: int) -> float:
    if dtype == _BFLOAT16:
        return float(struct.unpack("<f", struct.pack("<I", (bits & 0xFFFF) << 16))[0])
    return float(struct.unpack("<e", struct.pack("<H", bits & 0xFFFF))[0])


def _tensor_scalar(tensor: bytes) -> float | None:
    """The value of a one-element numeric TensorProto; None for anything else."""
    dtype = 0
    values: list[float] = []
    content = b""
    for number, wire, raw in fields(tensor):
        if number == 1 and wire == VARINT and isinstance(raw, int):
            dtype = raw
        elif number == 2 and wire == LENGTH and isinstance(raw, bytes):
            if not _is_scalar_shape(raw):
                return None
        elif number == 4 and wire == LENGTH and isinstance(raw, bytes):
            content = raw
        elif number == _FLOAT_VAL and isinstance(raw, bytes):
            values.extend(packed_fixed(raw, "f") if wire == LENGTH else [as_float(raw)])
        elif number == _DOUBLE_VAL and isinstance(raw, bytes):
            values.extend(packed_fixed(raw, "d") if wire == LENGTH else [as_double(raw)])
        elif number in _SIGNED_VARINTS or number in _PLAIN_VARINTS:
            ints = packed_varints(raw) if wire == LENGTH and isinstance(raw, bytes) else [raw]
            for v in ints:
                if not isinstance(v, int):
                    raise WireError("expected a varint")
                if number == _HALF_VAL:
                    values.append(_half(v, dtype))
                else:
                    values.append(float(signed64(v) if number in _SIGNED_VARINTS else v))
    if content:
        if dtype == _BFLOAT16 and len(content) == 2:
            return _half(content[0] | content[1] << 8, dtype)
        code = _CONTENT.get(dtype)
        if code is None or len(content) != struct.calcsize("<" + code):
            return None
        return float(struct.unpack("<" + code, content)[0])
    if len(values) != 1 or dtype in (0, 7):  # no value, several, or DT_STRING
        return None
    return values[0]


class EventFileReader:
    """Feed it one event file's bytes from its start, in pieces of any size (what was appended
    since the last read); `feed` returns the scalar points it completed, `series()` all of
    them so far. `error` is set (and reading stops) at a record whose length fails its
    checksum; `bad_records` counts records left out (data checksum, when checked, or an Event
    that does not decode)."""

    __slots__ = ("_records", "_set", "_kinds", "_undecodable", "file_version")

    def __init__(self, check_data: bool = False, kinds: dict[str, bool] | None = None) -> None:
        self._records = RecordSplitter(check_data)
        self._set = SeriesSet(TENSORBOARD)
        self._kinds: dict[str, bool] = dict(kinds) if kinds else {}
        """Tag -> whether its tensors are scalars (from its first metadata). A reader taking a
        file up at a record boundary (`kinds` of the one before) needs them: the metadata came
        with each tag's first value only."""
        self._undecodable = 0
        self.file_version: str | None = None

    @property
    def kinds(self) -> dict[str, bool]:
        """What each tag's tensors are, to take the file up later with a new reader."""
        return dict(self._kinds)

    @property
    def error(self) -> str | None:
        return self._records.error

    @property
    def bad_records(self) -> int:
        return self._records.bad_records + self._undecodable

    @property
    def offset(self) -> int:
        """Bytes of the file read as whole records."""
        return self._records.offset

    @property
    def pending(self) -> int:
        """Bytes held for a record not yet whole (the writer is mid-write, or stopped there)."""
        return self._records.pending

    def series(self) -> list[Series]:
        return self._set.series()

    def feed(self, data: bytes) -> list[tuple[str, Point]]:
        new: list[tuple[str, Point]] = []
        for record in self._records.feed(data):
            try:
                self._event(record, new)
            except (WireError, struct.error, IndexError):
                self._undecodable += 1
        add = self._set.add
        for tag, (step, value, wall_time) in new:
            add(tag, step, value, wall_time)
        return new

    def _event(self, record: bytes, out: list[tuple[str, Point]]) -> None:
        wall_time: float | None = None
        step = 0
        summary = b""
        for number, wire, raw in fields(record):
            if number == 1 and wire == FIXED64:
                wall_time = as_double(raw)
            elif number == 2 and wire == VARINT and isinstance(raw, int):
                step = signed64(raw)
            elif number == 5 and wire == LENGTH and isinstance(raw, bytes):
                summary = raw
            elif number == 3 and wire == LENGTH and isinstance(raw, bytes):
                self.file_version = raw.decode("utf-8", "replace")
        if not summary:
            return
        found: list[tuple[str, Point]] = []
        for number, wire, raw in fields(summary):
            if number == 1 and wire == LENGTH and isinstance(raw, bytes):
                scalar = self._value(raw)
                if scalar is not None:
                    found.append((scalar[0], (step, scalar[1], wall_time)))
        out.extend(found)

    def _value(self, value: bytes) -> tuple[str, float] | None:
        tag = ""
        simple: float | None = None
        tensor = b""
        metadata = b""
        for number, wire, raw in fields(value):
            if number == 1 and wire == LENGTH and isinstance(raw, bytes):
                tag = raw.decode("utf-8", "replace")
            elif number == 2 and wire == FIXED32:
                simple = as_float(raw)
            elif number == 8 and wire == LENGTH and isinstance(raw, bytes):
                tensor = raw
            elif number == 9 and wire == LENGTH and isinstance(raw, bytes):
                metadata = raw
        if metadata and tag not in self._kinds:
            plugin, data_class = _plugin_of(metadata)
            self._kinds[tag] = plugin == SCALARS_PLUGIN or data_class == _DATA_CLASS_SCALAR
        if simple is not None:
            return tag, simple
        if tensor and self._kinds.get(tag):
            number_value = _tensor_scalar(tensor)
            if number_value is not None:
                return tag, number_value
        return None


def read_event_file(data: bytes, check_data: bool = False) -> EventFileReader:
    """A whole event file at once (a cut-off last record is left out, not an error)."""
    reader = EventFileReader(check_data)
    reader.feed(data)
    return reader
