"""Event files written by the `tensorboard` package's own writer (EventFileWriter and its
protos), for the runfiles tests and benchmarks/bench_runfiles.py: what a real job leaves on disk,
without torch or TensorFlow.

Scalars come in the forms writers use: `simple_value` (PyTorch's SummaryWriter, tensorboardX,
TF1) and a one-element tensor with the `scalars` plugin's metadata on a tag's first value only
(TF2, Keras), its value in float_val, double_val or tensor_content.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from pathlib import Path

from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2
from tensorboard.summary.writer.event_file_writer import EventFileWriter

__all__ = ["simple", "tensor_scalar", "text", "event", "write_events", "float32"]

_SCALARS = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))


def float32(value: float) -> float:
    """`value` as a float32 field holds it."""
    return float(struct.unpack("<f", struct.pack("<f", value))[0])


def simple(tag: str, value: float) -> summary_pb2.Summary.Value:
    return summary_pb2.Summary.Value(tag=tag, simple_value=value)


def tensor_scalar(tag: str, value: float, form: str = "float_val", first: bool = True) -> summary_pb2.Summary.Value:
    """A TF2-style scalar: `form` float_val | double_val | content32 | content64 | int64_val."""
    if form == "float_val":
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, float_val=[value])
    elif form == "double_val":
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_DOUBLE, double_val=[value])
    elif form == "content32":
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_content=struct.pack("<f", value))
    elif form == "content64":
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_DOUBLE, tensor_content=struct.pack("<d", value))
    elif form == "int64_val":
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_INT64, int64_val=[int(value)])
    else:
        raise ValueError(form)
    tensor.tensor_shape.CopyFrom(tensor_shape_pb2.TensorShapeProto())
    out = summary_pb2.Summary.Value(tag=tag, tensor=tensor)
    if first:
        out.metadata.CopyFrom(_SCALARS)
    return out


def text(tag: str, words: str) -> summary_pb2.Summary.Value:
    """A text-plugin tensor (HF writes its arguments so): a string, never a scalar."""
    tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, string_val=[words.encode()])
    tensor.tensor_shape.dim.add(size=1)
    meta = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=meta)


def event(step: int, wall_time: float, *values: summary_pb2.Summary.Value) -> event_pb2.Event:
    return event_pb2.Event(step=step, wall_time=wall_time, summary=summary_pb2.Summary(value=list(values)))


def write_events(logdir: Path, events: Iterable[event_pb2.Event], suffix: str = "") -> Path:
    """One event file in `logdir` (which must hold none yet) holding `events` after the
    writer's own file_version event; its path."""
    logdir.mkdir(parents=True, exist_ok=True)
    writer = EventFileWriter(str(logdir), max_queue_size=1000, filename_suffix=suffix)
    for e in events:
        writer.add_event(e)
    writer.close()
    (path,) = logdir.glob("events.out.tfevents.*")
    return path
