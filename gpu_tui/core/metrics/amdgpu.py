"""AMD GPUs (issue 28): `amd-smi metric --json` (with `static --json` for the names) and
`rocm-smi --json`, read into the same GpuSample rows nvidia-smi's give.

amd-smi's JSON changed shape at amd-smi 26 (ROCm 7): a bare list of GPUs before, `{"gpu_data":
[...]}` after; both are read. A value is `{"value": .., "unit": ..}`; a missing one is the string
"N/A" (for a field, a list element or a whole section) and is None here, never 0. VRAM says "MB"
but counts MiB. Power is `power.socket_power` (older releases: `average_socket_power` /
`current_socket_power`). Temperature: the edge sensor, else the hotspot (junction): MI300X reports
no edge. rocm-smi: `{"card0": {...}, "system": {...}}`, every value a string, memory in bytes, a
sensor that is N/A left out.

Pure: text in, values out. Real outputs: tests/data/amd (where each came from is written beside them).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from gpu_tui.core.models import GpuFrame, GpuSample

__all__ = ["parse_amd_smi", "parse_amd_static", "parse_rocm_smi", "AmdReadError", "Statics"]

_MIB = 1024 * 1024


class AmdReadError(ValueError):
    """The text is not the tool's JSON (cut short, an error message, another tool's output)."""


def _load(text: str) -> Any:
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start < 0:
        raise AmdReadError("no JSON in the output")
    try:
        return json.loads(text[start:])
    except ValueError as exc:
        raise AmdReadError(f"not JSON: {exc}") from None


def _value(node: Any) -> float | None:
    """`{"value": 6, "unit": "W"}` or a bare number -> 6.0; "N/A", missing, or not finite -> None."""
    if isinstance(node, Mapping):
        node = node.get("value")
    if isinstance(node, bool) or not isinstance(node, (int, float, str)):
        return None
    try:
        number = float(node)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _section(gpu: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    node = gpu.get(name)
    return node if isinstance(node, Mapping) else {}  # "N/A" for a whole section


def _gpus(doc: Any) -> list[Mapping[str, Any]]:
    if isinstance(doc, Mapping) and isinstance(doc.get("gpu_data"), list):  # amd-smi 26+
        doc = doc["gpu_data"]
    if not isinstance(doc, list):
        raise AmdReadError("neither a list of GPUs nor gpu_data")
    return [g for g in doc if isinstance(g, Mapping)]


def _int(x: float | None) -> int | None:
    return None if x is None else int(round(x))


def _name(static: Mapping[str, Any] | None) -> str | None:
    if not static:
        return None
    for section, key in (("asic", "market_name"), ("board", "product_name")):
        name = _section(static, section).get(key)
        if isinstance(name, str) and name.strip() and name.strip() != "N/A":
            return name.strip()
    return None


Statics = Mapping[int, Mapping[str, Any]]
"""`amd-smi static --json` per GPU index (parse_amd_static)."""


def parse_amd_static(static_text: str | None) -> Statics:
    """`amd-smi static --json` by GPU index; empty where it cannot be read (names are a nicety:
    the numbers stand without them)."""
    statics: dict[int, Mapping[str, Any]] = {}
    if static_text:
        try:
            for i, g in enumerate(_gpus(_load(static_text))):
                at = _int(_value(g.get("gpu")))
                statics[i if at is None else at] = g
        except AmdReadError:
            return {}
    return statics


def parse_amd_smi(metric_text: str, static: str | Statics | None, taken_at: float) -> GpuFrame:
    """`amd-smi metric --json`, with `amd-smi static --json` (its text, or parse_amd_static's
    answer, read once for a stream) for names and VRAM size."""
    statics = parse_amd_static(static) if static is None or isinstance(static, str) else static
    samples = []
    for i, g in enumerate(_gpus(_load(metric_text))):
        index = _int(_value(g.get("gpu")))
        index = i if index is None else index
        usage, power, temp, mem = (_section(g, s) for s in ("usage", "power", "temperature", "mem_usage"))
        watts = next(
            (
                w
                for k in ("socket_power", "average_socket_power", "current_socket_power")
                if (w := _value(power.get(k))) is not None
            ),
            None,
        )
        celsius = _value(temp.get("edge"))
        if celsius is None:
            celsius = _value(temp.get("hotspot"))
        card = statics.get(index)
        total = _value(mem.get("total_vram"))
        if total is None and card is not None:
            total = _value(_section(card, "vram").get("size"))
        bdf = _section(card, "bus").get("bdf") if card is not None else None
        samples.append(
            GpuSample(
                index=index,
                uuid=bdf if isinstance(bdf, str) and bdf != "N/A" else None,
                name=_name(card),
                utilization_gpu=_int(_value(usage.get("gfx_activity"))),
                memory_used_mib=_int(_value(mem.get("used_vram"))),
                memory_total_mib=_int(total),
                temperature_c=_int(celsius),
                power_draw_w=watts,
                power_limit_w=None,
                fan_speed_percent=_int(_value(_section(g, "fan").get("usage"))),
            )
        )
    if not samples:
        raise AmdReadError("no GPUs in the output")
    return GpuFrame(taken_at, tuple(sorted(samples, key=lambda s: s.index)))


_ROCM_POWER = ("Average Graphics Package Power (W)", "Current Socket Graphics Package Power (W)")
_ROCM_NAME = ("Card Series", "Card series", "Device Name", "Card Model", "Card model")


def parse_rocm_smi(text: str, taken_at: float) -> GpuFrame:
    """`rocm-smi --showuse --showmeminfo vram --showpower --showtemp --showproductname --json`."""
    doc = _load(text)
    if not isinstance(doc, Mapping):
        raise AmdReadError("not an object of cards")
    samples = []
    for key, card in doc.items():
        if not (isinstance(key, str) and key.startswith("card") and key[4:].isdigit() and isinstance(card, Mapping)):
            continue  # "system" and friends
        used, total = _value(card.get("VRAM Total Used Memory (B)")), _value(card.get("VRAM Total Memory (B)"))
        celsius = _value(card.get("Temperature (Sensor edge) (C)"))
        if celsius is None:
            celsius = _value(card.get("Temperature (Sensor junction) (C)"))
        name = next((n for k in _ROCM_NAME if isinstance(n := card.get(k), str) and n.strip() and n != "N/A"), None)
        bus = card.get("PCI Bus")
        samples.append(
            GpuSample(
                index=int(key[4:]),
                uuid=bus.lower() if isinstance(bus, str) and bus != "N/A" else None,
                name=name.strip() if name else None,
                utilization_gpu=_int(_value(card.get("GPU use (%)"))),
                memory_used_mib=None if used is None else int(used // _MIB),
                memory_total_mib=None if total is None else int(total // _MIB),
                temperature_c=_int(celsius),
                power_draw_w=next((w for k in _ROCM_POWER if (w := _value(card.get(k))) is not None), None),
                power_limit_w=_value(card.get("Max Graphics Package Power (W)")),
            )
        )
    if not samples:
        raise AmdReadError("no cards in the output")
    return GpuFrame(taken_at, tuple(sorted(samples, key=lambda s: s.index)))
