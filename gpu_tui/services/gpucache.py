"""The GPUs each instance last reported, kept on this machine for `gpu-tui fit`.

`fit --probe` asks every instance (as `status` does) and writes what it found to
`<data dir>/gpus.json`; a later `fit` without `--probe` checks the model against those cards and
says when they were seen. Nothing secret is in it: instance names, GPU names and sizes.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from gpu_tui.config.atomicfile import write_atomic

__all__ = ["SeenGpus", "cache_file", "load_gpus", "save_gpus"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SeenGpus:
    gpu: str
    """The largest GPU's name as nvidia-smi gives it."""
    memory_mib: int
    count: int
    seen_at: float
    """Epoch seconds."""


def cache_file(data_dir: Path) -> Path:
    return data_dir / "gpus.json"


def load_gpus(path: Path) -> dict[str, SeenGpus]:
    """What was saved; {} when there is no file or it cannot be read (logged: the estimate
    matters more than the cache)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring the GPU cache %s: %s", path, exc)
        return {}
    found: dict[str, SeenGpus] = {}
    for name, entry in (doc.get("instances", {}) if isinstance(doc, dict) else {}).items():
        try:
            found[str(name)] = SeenGpus(
                str(entry["gpu"]), int(entry["memory_mib"]), int(entry["count"]), float(entry["seen_at"])
            )
        except (KeyError, TypeError, ValueError):
            log.warning("ignoring the GPU cache's entry for %r", name)
    return found


def save_gpus(path: Path, seen: dict[str, SeenGpus]) -> bool:
    """Merge `seen` into the file (instances not asked this time keep their last sighting);
    False when it could not be written (logged)."""
    merged = {**load_gpus(path), **seen}
    doc = {
        "instances": {
            name: {"gpu": s.gpu, "memory_mib": s.memory_mib, "count": s.count, "seen_at": s.seen_at}
            for name, s in sorted(merged.items())
        }
    }
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(doc, indent=1) + "\n")
    except OSError as exc:
        log.warning("could not save the GPU cache %s: %s", path, exc)
        return False
    return True
