"""Reading a TensorBoard event file of N scalars with core/runfiles (pure python, stdlib only).

`python benchmarks/bench_runfiles.py [--scalars 100000] [--tags 4] [--chunk 65536] [--repeat 3]`

The file is written in a temporary directory by the `tensorboard` package's own writer
(EventFileWriter, `simple_value` scalars, one per event, `--tags` tags in turn, as PyTorch's
SummaryWriter writes `add_scalar`), then read: whole; whole with the data CRC checked too; fed
in `--chunk`-byte pieces as a growing file is; and, for scale, by tensorboard's own
EventAccumulator (protobuf's C++ parser under it where installed). Printed: seconds (best of
`--repeat`) and scalars/s. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (str(ROOT), str(ROOT / "tests")):
    if p not in sys.path:
        sys.path.insert(0, p)


def _best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    best, count = float("inf"), 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        count = fn()
        best = min(best, time.perf_counter() - t0)
    return best, count


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scalars", type=int, default=100_000)
    ap.add_argument("--tags", type=int, default=4)
    ap.add_argument("--chunk", type=int, default=65536)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    from tbevents import event, simple, write_events

    from gpu_tui.core.runfiles.tfevents import EventFileReader, read_event_file

    tags = [f"train/metric_{i}" for i in range(args.tags)]
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        path = write_events(
            Path(tmp) / "run",
            (
                event(i // args.tags, 1.7e9 + i * 0.01, simple(tags[i % args.tags], 1.0 / (i + 1)))
                for i in range(args.scalars)
            ),
        )
        wrote = time.perf_counter() - t0
        data = path.read_bytes()

        def whole() -> int:
            return sum(len(s.points) for s in read_event_file(data).series())

        def checked() -> int:
            return sum(len(s.points) for s in read_event_file(data, check_data=True).series())

        def chunked() -> int:
            reader = EventFileReader()
            n = 0
            for at in range(0, len(data), args.chunk):
                n += len(reader.feed(data[at : at + args.chunk]))
            return n

        def tensorboards() -> int:
            from tensorboard.backend.event_processing import event_accumulator as ea

            acc = ea.EventAccumulator(str(path), size_guidance={ea.SCALARS: 0})
            acc.Reload()
            return sum(len(acc.Scalars(t)) for t in acc.Tags()["scalars"])

        print(
            f"event file: {args.scalars:,} scalars, {len(tags)} tags, {len(data) / 1e6:.2f} MB"
            f" (written in {wrote:.1f} s)"
        )
        rows = [
            ("core/runfiles, whole file (length CRC only)", whole),
            ("core/runfiles, whole file, data CRC checked too", checked),
            (f"core/runfiles, fed in {args.chunk}-byte chunks", chunked),
            ("tensorboard's EventAccumulator", tensorboards),
        ]
        for label, fn in rows:
            seconds, count = _best(fn, args.repeat)
            print(f"{label:<52} {seconds:7.3f} s  {count / seconds:>12,.0f} scalars/s  ({count:,} read)")


if __name__ == "__main__":
    main()
