"""core/trainlog/frames: where a traceback says a job failed, on the real corpus's tracebacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_tui.core.trainlog.frames import last_frame

REAL = Path(__file__).resolve().parents[1] / "data" / "logs" / "real"


@pytest.mark.parametrize(
    ("log", "frame"),
    [
        # the job's own frame, under torch's in the same traceback
        ("traceback/torchelastic-nccl-traceback-restart-resumed.log", "examples/imagenet/main.py:471 in train"),
        ("traceback/yolov5-wandb-after-last-epoch.log", "huang.biao/ClassyVision/test.py:242 in test"),
        # `[rank0]:` prefixes, a chained traceback through vllm's frames
        ("traceback/unsloth-vllm-rank0-chained-traceback.log", "docs/VL/train_qwen_grpo.py:182 in train"),
    ],
)
def test_the_last_frame_in_the_jobs_own_code(log: str, frame: str) -> None:
    assert last_frame((REAL / log).read_text(encoding="utf-8", errors="replace")) == frame


def test_rank_prefixes_library_frames_and_none() -> None:
    text = (
        '[rank0]: Traceback (most recent call last):\n[rank0]:   File "/root/proj/train.py", line 88, in <module>\n'
        '[rank0]:   File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1532, in _wrapped\n'
        "[rank0]: ValueError: bad shape\n"
    )
    assert last_frame(text) == "root/proj/train.py:88 in <module>"
    only_library = (
        'Traceback (most recent call last):\n  File "/opt/conda/lib/python3.10/site-packages/x.py", line 3, in f\n'
    )
    assert last_frame(only_library) == "python3.10/site-packages/x.py:3 in f"  # none of the job's: the last
    assert last_frame("epoch 1 loss 0.3\nKilled\n") is None
