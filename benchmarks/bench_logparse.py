"""Log parser throughput: LogStream + LogSummary over a big synthetic log.

`python benchmarks/bench_logparse.py [--mb 200] [--chunk 65536]`

The log is generated in a temporary directory (never committed) from a mix of the forms in
tests/data/logs/real: tqdm bars redrawn with `\\r`, HF Trainer dicts, Keras epochs, Megatron
iterations, mmdet lines, YOLO rows on long `\\r` lines, plain prints, a GBK line. It is fed in
`--chunk`-byte chunks as the log screen and `jobs` do. Printed: lines/s (display lines and
superseded bar states) and MB/s. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from gpu_tui.core.logstream import LogStream
from gpu_tui.core.logsummary import LogSummary


def block(i: int) -> bytes:
    bars = "".join(
        f"\r{p:3d}%|{'█' * (p // 10):<10}| {p * 10}/1000 [00:{p % 60:02d}<01:00, 36.10it/s, loss={2.0 - p / 100:.3f}]"
        for p in range(0, 100, 5)
    )
    yolo = "".join(
        f"\r      {i % 100 + 1}/100      6.21G      3.795      9.549    0.02906        170        640:"
        f"  {p:2d}%|██   | {p}/99 [00:04<00:10,  5.00it/s]"
        for p in range(0, 99, 3)
    )
    text = (
        f"Epoch {i % 100 + 1}/100\n{bars}\n"
        f"{{'loss': 1.6462, 'grad_norm': 17.5, 'learning_rate': 4.2e-05, 'epoch': {i / 10:.2f}}}\n"
        f" iteration {i:8d}/  500000 | consumed samples: {i * 256} | elapsed time per iteration (ms): 450.3 |"
        f" learning rate: 1.5E-04 | lm loss: 2.304512E+00 | loss scale: 65536.0 | grad norm: 1.234 |\n"
        f"2021-01-01 12:00:00,000 - mmdet - INFO - Epoch [1][{i % 1000}/1000]\tlr: 1.000e-02, eta: 1 day, 2:03:04,"
        f" time: 0.5, data_time: 0.01, memory: 3000, loss_cls: 0.8, loss_bbox: 0.3, loss: 1.7\n"
        f"     Epoch   GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size\n{yolo}\n"
        f"step {i} | loss {1.0 / (i + 1):.5f} | lr 1.0e-04\n"
        "INFO saving checkpoint to /root/autodl-tmp/ckpt\n"
    )
    return text.encode() + "第 3 轮 训练中 loss: 0.91\n".encode("gbk") * (i % 50 == 0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=200.0)
    ap.add_argument("--chunk", type=int, default=65536)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "log"
        target = int(args.mb * 1024 * 1024)
        with path.open("wb") as f:
            size, i = 0, 0
            while size < target:
                data = block(i)
                f.write(data)
                size += len(data)
                i += 1
        stream, summary = LogStream(), LogSummary()
        start = time.perf_counter()
        with path.open("rb") as f:
            while chunk := f.read(args.chunk):
                summary.consume(stream.feed(chunk))
        summary.consume(stream.close())
        seconds = time.perf_counter() - start
    lines = stream.lines_seen + stream.states_replaced
    mb = size / 1024 / 1024
    print(f"{mb:.0f} MB, {stream.lines_seen:,} lines + {stream.states_replaced:,} bar states in {seconds:.1f} s:"
          f" {lines / seconds:,.0f} lines/s, {mb / seconds:.2f} MB/s")
    print(f"progress {summary.progress}\nlast_loss {summary.last_loss} failure {summary.failure}")


if __name__ == "__main__":
    main()
