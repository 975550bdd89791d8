"""gpu_tui.core.trainlog.line and .summary against the FIELD_NOTES forms and the tests/data/logs corpus (no mocks).

- parse_line: every progress, metric and failure form of docs/FIELD_NOTES.md ("Training
  logs"), and the look-alikes that must not count;
- LogSummary: tracebacks (chained, per rank), which failure wins, finish() per CONTRACTS.md,
  the bounded loss curve;
- corpus: tests/data/logs/ (`<name>.log` + `<name>.expected.json`, see its README), each fed
  to LogStream + LogSummary whole, in fixed and in random chunks;
- hypothesis: parse_line never raises and its output is well-formed.
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_tui.core.trainlog import line as logline
from gpu_tui.core.trainlog import summary as logsummary
from gpu_tui.core.trainlog.line import (
    ABORTED,
    INF_LOSS,
    KILLED,
    NAN_LOSS,
    OOM,
    SEGFAULT,
    LineInfo,
    Progress,
    is_loss_key,
    parse_duration,
    parse_line,
)
from gpu_tui.core.trainlog.stream import LogStream
from gpu_tui.core.trainlog.summary import LogSummary, eval_loss, train_loss

LOGS_DIR = Path(__file__).resolve().parents[1] / "data" / "logs"


def test_public_api_is_exported() -> None:
    for module in (logline, logsummary):
        for name in module.__all__:
            assert hasattr(module, name), name


# --------------------------------------------------------------------------- progress


@pytest.mark.parametrize(
    ("line", "want"),
    [
        (
            "desc: 45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s, loss=0.523]",
            Progress(45.0, 450, 1000, 12, 15, 36.1, "36.10it/s", "desc"),
        ),
        ("450it [00:12, 36.10it/s]", Progress(None, 450, None, 12, None, 36.1, "36.10it/s")),
        ("  2%|▏         | 2/100 [00:02<01:58,  1.25s/it]", Progress(2.0, 2, 100, 2, 118, 0.8, "1.25s/it")),
        ("  0%|          | 0/1000 [00:00<?, ?it/s]", Progress(0.0, 0, 1000, 0, None, None, "?it/s")),
        (
            "100%|██████████| 1000/1000 [1:02:03<00:00,  3.50it/s]",
            Progress(100.0, 1000, 1000, 3723, 0, 3.5, "3.50it/s"),
        ),
        (
            "Epoch 1:   4%|▎         | 40/1095 [00:03<01:37, 10.84it/s, v_num=10, train_loss=0.500]",
            Progress(4.0, 40, 1095, 3, 97, 10.84, "10.84it/s", "Epoch 1"),
        ),
        (
            "Validation DataLoader 0:  50%|█████     | 5/10 [00:00<00:00, 20.00it/s]",
            Progress(50.0, 5, 10, 0, 0, 20.0, "20.00it/s", "Validation DataLoader 0"),
        ),
        (
            "Map:  12%|█▏        | 1.20k/10.0k [00:01<00:08, 1.05kex/s]",
            Progress(12.0, 1200, 10000, 1, 8, 1050.0, "1.05kex/s", "Map"),
        ),
        ("tokenize: 12it [00:14,  1.23s/it]", Progress(None, 12, None, 14, None, 1 / 1.23, "1.23s/it", "tokenize")),
        ("100/? [00:10, 10.00it/s]", Progress(None, 100, None, 10, None, 10.0, "10.00it/s")),
        (
            "  32/1875 [>.............................] - ETA: 3s - loss: 1.2345",
            Progress(100 * 32 / 1875, 32, 1875, None, 3),
        ),
        (
            "1875/1875 [==============================] - 5s 2ms/step - loss: 0.3437",
            Progress(100.0, 1875, 1875, 5, None),
        ),
        ("1875/1875 ━━━━━━━━━━━━━━━━━━━━ 5s 2ms/step - accuracy: 0.9 - loss: 0.3", Progress(100.0, 1875, 1875, 5)),
        ("313/313 - 1s - loss: 0.0962", Progress(100.0, 313, 313, 1)),
        (
            "  1/1875 [..............................] - ETA: 5:12 - loss: 2.3026",
            Progress(100 / 1875, 1, 1875, None, 312),
        ),
        ("step 100/1000 loss 2.3", Progress(10.0, 100, 1000)),
        # mmcv / mmengine ProgressBar: no percent printed, the ETA padded to five places
        (
            "[>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>>        ] 3217/3849, 4.0 task/s, elapsed: 799s, ETA:   157s",
            Progress(100 * 3217 / 3849, 3217, 3849, 799, 157, 4.0, "4.0 task/s"),
        ),
        ("[2026-11-29 14:15:01] INFO saving", None),
    ],
)
def test_progress(line: str, want: Progress | None) -> None:
    got = parse_line(line).progress
    if want is None or got is None:
        assert got == want
        return
    for attr in ("rate", "percent"):
        value = getattr(want, attr)
        assert getattr(got, attr) == (pytest.approx(value) if value is not None else None), attr
    for attr in ("step", "steps", "elapsed_seconds", "eta_seconds", "desc"):
        assert getattr(got, attr) == getattr(want, attr), attr
    if want.rate_text is not None:
        assert got.rate_text == want.rate_text


def test_progress_json_is_the_contract_shape() -> None:
    p = parse_line("desc: 45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s, loss=0.523]").progress
    assert p is not None and p.as_json() == {
        "percent": 45.0,
        "eta_seconds": 15,
        "epoch": None,
        "epochs": None,
        "step": 450,
        "steps": 1000,
    }


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("00:12", 12),
        ("01:37", 97),
        ("1:02:03", 3723),
        ("100:00:00", 360000),
        ("3s", 3),
        ("?", None),
        ("", None),
        ("1:2:3:4", None),
        ("ab:cd", None),
    ],
)
def test_parse_duration(text: str, seconds: int | None) -> None:
    assert parse_duration(text) == seconds


# --------------------------------------------------------------------------- metrics


@pytest.mark.parametrize(
    ("line", "metrics"),
    [
        (
            "{'loss': 1.6462, 'grad_norm': 17.5, 'learning_rate': 4.2e-05, 'epoch': 0.5}",
            {"loss": 1.6462, "grad_norm": 17.5, "learning_rate": 4.2e-05, "epoch": 0.5},
        ),
        (
            "{'loss': '1.6462', 'grad_norm': '17.5', 'learning_rate': '4.2e-05', 'epoch': '0.5'}",
            {"loss": 1.6462, "grad_norm": 17.5, "learning_rate": 4.2e-05, "epoch": 0.5},
        ),
        (
            "{'eval_loss': 0.52, 'eval_runtime': 2.3, 'epoch': 1.0}",
            {"eval_loss": 0.52, "eval_runtime": 2.3, "epoch": 1.0},
        ),
        ('{"loss": 0.25, "step": 10}', {"loss": 0.25, "step": 10.0}),
        (
            "Epoch 1:   4%|▎         | 40/1095 [00:03<01:37, 10.84it/s, v_num=10, train_loss=0.500]",
            {"epoch": 1.0, "train_loss": 0.5},
        ),
        (
            "1875/1875 [====] - 5s 2ms/step - loss: 0.3437 - acc: 0.8957 - val_loss: 0.0759",
            {"loss": 0.3437, "acc": 0.8957, "val_loss": 0.0759},
        ),
        ("loss: 0.12", {"loss": 0.12}),
        ("loss=0.12", {"loss": 0.12}),
        ("Loss 0.12", {"loss": 0.12}),
        ("step 100 | loss 2.31", {"step": 100.0, "loss": 2.31}),
        # torchvision's ImageNet script: top-k accuracy with its running mean, TAB-separated
        (
            "Epoch: [1][  10/1563]\tLoss 4.4603e+00 (4.4707e+00)\tAcc@1  12.50 (  8.52)\tAcc@5  21.88 ( 20.45)",
            {"loss": 4.4603, "acc@1": 12.5, "acc@5": 21.88},
        ),
        ("Train Loss: 0.5 | Val Loss: 0.6 | acc 91.5%", {"train_loss": 0.5, "val_loss": 0.6, "acc": 91.5}),
        ("it 3 lr: 1e-4, train/loss=0.7", {"lr": 1e-4, "train/loss": 0.7}),
        ("loss 0.5230:  45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s]", {"loss": 0.523}),
        ("loss: tensor(2.3012, device='cuda:0', grad_fn=<NllLossBackward0>)", {"loss": 2.3012, "cuda": 0.0}),
        # look-alikes
        ("loss_scale: 65536", {"loss_scale": 65536.0}),
        ("saved /root/proj/loss=3.0/ckpt", {}),
        ("2026-11-29 14:15:01,123 INFO train.py:42 - seed: 42", {"seed": 42.0}),
        ("checking batch 0: no nan values found", {}),
        ("time: 12:30:45 step: 10/100 info: done", {}),
        ("Downloading: 100%|██████████| 1.2k/1.2k [00:00<00:00, 2.1MB/s]", {}),
    ],
)
def test_metrics(line: str, metrics: dict[str, float]) -> None:
    assert dict(parse_line(line).metrics) == metrics


@pytest.mark.parametrize(
    ("line", "key", "failure"),
    [
        ("loss: nan", "loss", NAN_LOSS),
        ("{'loss': nan, 'grad_norm': nan, 'learning_rate': 1e-05}", "loss", NAN_LOSS),
        ("{'loss': 'NaN'}", "loss", NAN_LOSS),
        ("train_loss=inf", "train_loss", INF_LOSS),
        ("val_loss: -inf", "val_loss", INF_LOSS),
        ("step 40 | loss nan | lr 1.0e-04", "loss", NAN_LOSS),
        ("grad_norm: inf", "grad_norm", None),  # fp16 overflow, the step is skipped: not a failure
        ("loss_scale: inf", "loss_scale", None),
    ],
)
def test_non_finite_values(line: str, key: str, failure: str | None) -> None:
    info = parse_line(line)
    assert not math.isfinite(info.metrics[key])
    assert info.failure == failure


def test_metrics_are_read_only_and_the_empty_info_is_shared() -> None:
    info = parse_line("loss: 0.5")
    with pytest.raises(TypeError):
        info.metrics["loss"] = 1.0  # type: ignore[index]
    assert parse_line("nothing to see") is parse_line("still nothing")
    assert parse_line("nothing to see") == LineInfo()


def test_loss_keys() -> None:
    assert all(map(is_loss_key, ("loss", "train_loss", "eval/loss", "train_loss_step", "val-loss")))
    assert not any(map(is_loss_key, ("loss_scale", "lossy", "v_num", "loss_scaler")))
    assert train_loss({"train_loss_epoch": 0.6, "train_loss_step": 0.5}) == 0.5
    assert train_loss({"eval_loss": 0.4}) is None
    assert train_loss({"train_runtime": 10.0, "train_loss": 0.9}) is None
    assert train_loss({"mlm_loss": 0.4, "val_loss": 0.2}) == 0.4
    assert eval_loss({"loss": 1.0, "val/loss": 0.3}) == 0.3
    assert eval_loss({"test_loss": 0.1}) == 0.1
    assert eval_loss({}) is None


# --------------------------------------------------------------------------- failures per line


@pytest.mark.parametrize(
    "line",
    [
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 23.69 GiB total"
        " capacity; 22.81 GiB already allocated)",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.65 GiB total capacity)",
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU 1 has a total"
        " capacity of 79.10 GiB",
        "RuntimeError: CUDA error: out of memory",
        "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB.",
        "[rank3]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB",
        "[default0]:RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB",
        "torch.OutOfMemoryError",
        "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
        "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor"
        " with shape[64,512] on /job:localhost/replica:0/task:0/device:GPU:0",
        "CUDA out of memory. Tried to allocate 2.00 GiB",
    ],
)
def test_oom_phrasings(line: str) -> None:
    assert parse_line(line).failure == OOM


@pytest.mark.parametrize(
    "line",
    [
        "/root/proj/data.py:88: UserWarning: loading the whole corpus may run out of memory",
        "Tip: if you see 'CUDA out of memory.' lower the batch size",
        "    Raises: torch.OutOfMemoryError if the batch does not fit",
        "    except torch.cuda.OutOfMemoryError:",
        "retrying after OutOfMemoryError with batch size 16",
        "Killed 3 zombie dataloader workers",
        "the job was Killed by the user",
        "no nan values found, loss is finite",
        "Segmentation fault handler installed",
        "E1129 ... failed (exitcode: 1) local_rank: 1 (pid: 4243)",
        "    except MemoryError:",
        "caught MemoryError, halving the batch",
        # huggingface_hub's warning while it falls back to the cache: the run goes on
        "'(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /x\"),"
        " '(Request ID: 1)')' thrown while requesting HEAD https://huggingface.co/bert/resolve/main/config.json",
        "Retrying in 1s [Retry 1/5]: Max retries exceeded with url: https://huggingface.co/x",
        "    raise ConnectionError(e, request=request)",
        "a Bus error handler is installed",
        "  exitcode  : 1 (pid: 8158)",
        "press ^C to stop",
        "bash: syntax error near ^Cx",
    ],
)
def test_failure_look_alikes(line: str) -> None:
    assert parse_line(line).failure is None


@pytest.mark.parametrize(
    ("line", "failure"),
    [
        ("Killed", KILLED),
        ("  Killed  ", KILLED),
        ("/root/.gpu-tui/jobs/x/run.sh: line 3:  4242 Killed              python train.py", KILLED),
        ("E1129 14:15:41 api.py:869] failed (exitcode: -9) local_rank: 0 (pid: 4242)", "killed (SIGKILL)"),
        # a launcher naming the signal that ended a child (issue 25)
        ("  exitcode  : -15 (pid: 8158)", "killed (SIGTERM)"),
        ("  traceback : Signal 9 (SIGKILL) received by PID 8158", "killed (SIGKILL)"),
        (
            "[2023-04-14 13:11:27,885] [ERROR] [launch.py:434:sigkill_handler] ['python3'] exits with return code = -9",
            "killed (SIGKILL)",
        ),
        (
            "subprocess.CalledProcessError: Command '['python3', 'train.py']' died with <Signals.SIGKILL: 9>.",
            "killed (SIGKILL)",
        ),
        ("  exitcode  : -11 (pid: 8158)", SEGFAULT),
        ("  exitcode  : -7 (pid: 8158)", "Bus error"),
        ("  exitcode  : -4 (pid: 8158)", "killed (signal 4)"),
        # SIGBUS, most often a container's small /dev/shm
        (
            "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared"
            " memory (shm).",
            "Bus error (shared memory)",
        ),
        ("RuntimeError: DataLoader worker (pid 325) is killed by signal: Bus error.", "Bus error (shared memory)"),
        ("Bus error (core dumped)", "Bus error"),
        ("run.sh: line 3:  4242 Bus error               (core dumped) python x.py", "Bus error"),
        ("总线错误 (核心已转储)", "Bus error"),
        # other frameworks' GPU OOM
        (
            "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate"
            " 7406166528 bytes.",
            OOM,
        ),
        (
            "Out of memory error on GPU 0. Cannot allocate 98.000244MB memory on GPU 0, 6.000000GB memory has"
            " been allocated",
            OOM,
        ),
        # asynchronous CUDA errors, wherever they are reported
        (
            "  what():  CUDA error: an illegal instruction was encountered",
            "CUDA error: an illegal instruction was encountered",
        ),
        (
            "[PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception:"
            " CUDA error: misaligned address",
            "CUDA error: misaligned address",
        ),
        # a download that cannot reach its host
        (
            "requests.exceptions.ConnectionError: (MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co',"
            " port=443): Max retries exceeded with url: /x",
            "network: huggingface.co",
        ),
        (
            "urllib3.exceptions.MaxRetryError: None: Max retries exceeded with url:"
            " https://www.modelscope.cn/api/v1/models/x",
            "network: www.modelscope.cn",
        ),
        (
            "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the"
            " cached files",
            "network: huggingface.co",
        ),
        (
            "huggingface_hub.utils._errors.LocalEntryNotFoundError: An error happened while trying to locate the"
            " file on the Hub",
            "network",
        ),
        # the user's own Ctrl+C, as a terminal echoes it at a line's start
        ("^C[2024-05-26 15:06:40,046] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 22523", "interrupted"),
        ("^C", "interrupted"),
        # the user's own Ctrl+C, as Lightning reports it
        (
            "/opt/conda/lib/python3.10/site-packages/lightning/pytorch/trainer/call.py:53: UserWarning: Detected"
            " KeyboardInterrupt, attempting graceful shutdown...",
            "interrupted",
        ),
        ("Segmentation fault (core dumped)", SEGFAULT),
        ("run.sh: line 3:  4242 Segmentation fault      (core dumped) python x.py", SEGFAULT),
        ("Aborted (core dumped)", ABORTED),
        # a Chinese locale's bash (zh_CN.UTF-8): the same job lines in its words
        ("已杀死", KILLED),
        ("run.sh: 行 3:  4242 已杀死               python train.py", KILLED),
        # the kill glued onto the bar it cut short (tqdm's, mmcv's)
        (" 31%|███▏      | 331/1063 [01:06<03:59,  3.06it/s]Killed", KILLED),
        ("[>>>>>>>>>>>>>>>>>>>> ] 3217/3849, 4.0 task/s, elapsed: 799s, ETA:   157s已杀死", KILLED),
        ("run.sh: 行 3:  4242 段错误               (核心已转储) python x.py", SEGFAULT),
        ("已放弃 (核心已转储)", ABORTED),
        # PyTorch 0.x's OOM words
        ("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/THCStorage.cu:66", OOM),
        ("MemoryError", "MemoryError"),
        (
            "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 58.0 GiB for an array",
            "MemoryError: Unable to allocate 58.0 GiB for an array",
        ),
    ],
)
def test_process_death(line: str, failure: str) -> None:
    assert parse_line(line).failure == failure


# --------------------------------------------------------------------------- LogSummary


def summary_of(text: str) -> LogSummary:
    s = LogSummary()
    for line in text.splitlines():
        s.add_line(line)
    return s


TRACEBACK = """\
Traceback (most recent call last):
  File "train.py", line 3, in <module>
    x = f()
        ^^^
  File "train.py", line 2, in f
    raise ValueError("bad shape")
ValueError: bad shape
"""


def test_traceback_gives_its_exception() -> None:
    s = summary_of("step 1 loss 2.0\n" + TRACEBACK)
    assert s.failure == "Traceback: ValueError: bad shape"
    assert s.finish(1) == "Traceback: ValueError: bad shape"
    assert s.finish(0) is None  # it printed and survived
    interrupted = summary_of(TRACEBACK.replace("ValueError: bad shape\n", "KeyboardInterrupt\n"))
    assert interrupted.failure == "interrupted"  # the user's Ctrl+C, not a crash (issue 25)


def test_traceback_name_is_shortened_and_reason_bounded() -> None:
    long = "omegaconf.errors.ConfigKeyError: " + "k" * 300
    s = summary_of(TRACEBACK.replace("ValueError: bad shape", long))
    assert s.failure is not None and s.failure.startswith("Traceback: ConfigKeyError: kkk")
    assert len(s.failure) == 120 and s.failure.endswith("…")


def test_traceback_without_exception_line_is_no_failure_yet() -> None:
    s = summary_of(TRACEBACK.rsplit("\n", 2)[0])
    assert s.failure is None


def test_oom_traceback_reports_oom() -> None:
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    s = summary_of(TRACEBACK.replace("ValueError: bad shape", oom))
    assert s.failure == OOM and s.finish(1) == OOM


def test_chained_traceback_reports_the_last_exception() -> None:
    first = TRACEBACK.replace("ValueError: bad shape", "KeyError: 'lr'")
    for phrase in (
        "During handling of the above exception, another exception occurred:",
        "The above exception was the direct cause of the following exception:",
    ):
        s = summary_of(first + "\n" + phrase + "\n\n" + TRACEBACK)
        assert s.failure == "Traceback: ValueError: bad shape"
    # two separate tracebacks: the first one counts
    s = summary_of(first + "some other output\n" + TRACEBACK)
    assert s.failure == "Traceback: KeyError: 'lr'"


def test_a_specific_failure_wins_over_a_traceback() -> None:
    s = summary_of(TRACEBACK + "Killed\n")
    assert s.failure == KILLED
    s = summary_of("loss: nan\n" + TRACEBACK)
    assert s.failure == NAN_LOSS


def test_rank_prefixed_tracebacks_do_not_mix() -> None:
    a = ["[rank0]: " + line for line in TRACEBACK.splitlines()]
    b = ["[rank3]: " + line for line in TRACEBACK.replace("bad shape", "rank three").splitlines()]
    s = LogSummary()
    for x, y in zip(b, a, strict=True):  # rank3 is one line ahead of rank0
        s.add_line(x)
        s.add_line(y)
    assert s.failure == "Traceback: ValueError: rank three"


def test_superseded_states_do_not_start_tracebacks() -> None:
    s = LogSummary()
    s.add_line("Traceback (most recent call last):", final=False)
    s.add_line("  raise ValueError(x)")
    s.add_line("not an exception: x")
    assert s.failure is None


def test_finish_follows_the_contract() -> None:
    clean = summary_of("step 1 | loss 2.0\nstep 2 | loss 1.0\n")
    assert clean.finish(0) is None
    assert clean.finish(3) == "exit code 3"
    assert clean.finish(137) == KILLED and clean.finish(-9) == KILLED
    assert clean.finish(130) == "interrupted"  # 128 + SIGINT: a Ctrl+C nobody caught
    assert clean.finish(None, killed_by_signal=True) == KILLED
    assert clean.finish(None) is None
    nan = summary_of("step 1 | loss 2.0\nstep 2 | loss nan\nstep 3 | loss 1.0\n")
    assert nan.failure == NAN_LOSS
    assert nan.finish(0) == NAN_LOSS and nan.finish(1) == NAN_LOSS and nan.finish(137) == NAN_LOSS
    oom = summary_of("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
    assert oom.finish(1) == OOM and oom.finish(137) == OOM and oom.finish(0) is None
    # a NaN after a survived OOM is still reported on exit 0
    both = summary_of("RuntimeError: CUDA out of memory. Tried to allocate 2 GiB\nloss: nan\n")
    assert both.failure == OOM and both.finish(0) == NAN_LOSS


def test_last_loss_prefers_training_loss_and_live_bars() -> None:
    s = LogSummary()
    s.add_line("{'loss': 1.5, 'epoch': 0.5}")
    s.add_line("{'eval_loss': 1.2, 'epoch': 0.5}")
    assert (s.last_loss, s.last_eval_loss) == (1.5, 1.2)
    s.set_live(["Epoch 1:  45%|████▌     | 450/1000 [00:12<00:15, 36.10it/s, train_loss=0.523]"])
    assert s.last_loss == 0.523
    assert s.progress is not None and s.progress.as_json() == {
        "percent": 45.0,
        "eta_seconds": 15,
        "epoch": 1,
        "epochs": None,
        "step": None,
        "steps": None,
    }
    assert s.loss_points == [(0, 1.5)]  # live rows are not points: they come again as events
    s.add_line("{'train_runtime': 10.0, 'train_loss': 0.9, 'epoch': 1.0}")
    assert s.last_loss == 0.523


def test_topmost_live_bar_is_the_progress() -> None:
    s = LogSummary()
    s.set_live(
        [
            "epochs:  50%|█████     | 1/2 [00:02<00:02,  2.00s/it]",
            "batches:  75%|███████▌  | 3/4 [00:01<00:00,  2.00it/s]",
        ]
    )
    assert s.progress is not None and s.progress.desc == "epochs"
    s.set_live([])
    assert s.progress is not None and s.progress.desc == "epochs"  # kept until a newer bar


def test_repeated_bar_states_add_one_point() -> None:
    s = LogSummary()
    for _ in range(3):
        s.add_line(" 10%|█         | 10/100 [00:01<00:09, 10.00it/s, loss=2.000]", final=False)
    s.add_line(" 20%|██        | 20/100 [00:02<00:08, 10.00it/s, loss=2.000]", final=False)
    s.add_line(" 20%|██        | 20/100 [00:02<00:08, 10.00it/s, loss=2.000]")
    assert s.loss_points == [(10, 2.0), (20, 2.0)]  # x: the bar's step
    assert s.loss_axis == "step"


def test_loss_curve_is_bounded_and_spans_the_run() -> None:
    s = LogSummary(max_points=100)
    for i in range(100_000):
        s.add_line(f"step {i} | loss {1.0 / (i + 1):.6f}")
    points = s.loss_points
    assert len(points) <= 100
    assert points[0] == (0, 1.0) and points[-1][0] > 90_000
    steps = {b[0] - a[0] for a, b in zip(points, points[1:], strict=False)}
    assert len(steps) == 1  # evenly spread
    assert s.last_loss == pytest.approx(1e-5)


def test_metric_names_are_bounded() -> None:
    s = LogSummary()
    for i in range(1000):
        s.add_line(f"key_{i}: {i}")
    assert len(s.metrics) == 128 and s.metrics["key_0"] == 0.0


def test_summary_bad_arguments() -> None:
    with pytest.raises(ValueError):
        LogSummary(max_points=1)


# --------------------------------------------------------------------------- corpus

CASES = sorted(LOGS_DIR.glob("*.log"))
CASE_IDS = [p.stem for p in CASES]


def load_case(path: Path) -> tuple[bytes, dict]:
    expected = path.with_name(path.stem + ".expected.json")
    return path.read_bytes(), json.loads(expected.read_text("utf-8"))


def chunkings(data: bytes, seed: int) -> list[list[bytes]]:
    rng = random.Random(seed)
    cuts, pos = [], 0
    while pos < len(data):
        pos += rng.randint(1, 300)
        cuts.append(pos)
    random_chunks = [data[a:b] for a, b in zip([0, *cuts], cuts, strict=False)]  # [0, *cuts] is one longer
    return [
        [data],
        [data[i : i + 7] for i in range(0, len(data), 7)],
        [data[i : i + 4096] for i in range(0, len(data), 4096)],
        random_chunks,
    ]


def test_corpus_is_complete() -> None:
    assert len(CASES) >= 15
    for path in CASES:
        assert path.with_name(path.stem + ".expected.json").is_file(), path
    for path in LOGS_DIR.glob("*.expected.json"):
        assert path.with_name(path.name.removesuffix(".expected.json") + ".log").is_file(), path
    failures = {load_case(p)[1]["failure"] for p in CASES}
    assert {OOM, KILLED, NAN_LOSS, None} <= failures
    assert any(str(f).startswith("Traceback: ") for f in failures)


def same(got: float | None, want: object) -> bool:
    if want == "nan":
        return got is not None and math.isnan(got)
    return got == want


@pytest.mark.parametrize("path", CASES, ids=CASE_IDS)
def test_corpus_case(path: Path) -> None:
    data, want = load_case(path)
    results = []
    for n, chunks in enumerate(chunkings(data, seed=len(data))):
        stream, summary = LogStream(), LogSummary()
        live: tuple[str, ...] = ()
        for chunk in chunks:
            update = stream.feed(chunk)
            summary.consume(update)
            live = update.live
        progress = summary.progress
        summary.consume(stream.close())
        lines = list(stream.lines)
        where = f"{path.name}, chunking {n}"

        if "lines" in want:
            assert lines == want["lines"], where
        if "line_count" in want:
            assert len(lines) == want["line_count"], where
        assert stream.lines_seen == len(lines)
        if "lines_include" in want:
            it = iter(lines)
            assert all(line in it for line in want["lines_include"]), where
        for bad in want.get("never_in_lines", []):
            assert not any(bad in line for line in lines), (where, bad)
        if "live_at_end" in want:
            assert list(live) == want["live_at_end"], where
        if "progress" in want:
            if want["progress"] is None:
                assert progress is None, where
            else:
                assert progress is not None, where
                for key, value in want["progress"].items():
                    assert getattr(progress, key) == value, (where, key)
        assert same(summary.last_loss, want["last_loss"]), (where, summary.last_loss)
        if "last_eval_loss" in want:
            assert same(summary.last_eval_loss, want["last_eval_loss"]), where
        if "loss_points" in want:
            assert [list(p) for p in summary.loss_points] == want["loss_points"], where
        if "eval_points" in want:
            assert [list(p) for p in summary.eval_points] == want["eval_points"], where
        assert summary.failure == want["failure"], where
        for case in want["finish"]:
            got = summary.finish(case["exit_code"], case.get("killed_by_signal", False))
            assert got == case["failure"], (where, case)
        results.append((lines, live, summary.failure))
    assert all(r == results[0] for r in results)


# --------------------------------------------------------------------------- hypothesis


WORDS = [
    "loss",
    ":",
    "=",
    " ",
    "nan",
    "inf",
    "1.5",
    "e-3",
    "[",
    "]",
    "<",
    "?",
    "00:12",
    "%|",
    "|",
    "/",
    "it/s",
    "s/it",
    "'",
    "Error",
    "CUDA out of memory.",
    "Killed",
    "[rank0]:",
    "tensor(",
    "━",
    " - ",
    "ETA: ",
    "3s",
    "k",
    "M",
    "Traceback (most recent call last):",
    "\n",
]


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
    | st.lists(st.sampled_from(WORDS), max_size=30).map("".join)
)
def test_parse_line_never_raises(line: str) -> None:
    info = parse_line(line)
    for key, value in info.metrics.items():
        assert key == key.lower() and isinstance(value, float)
    p = info.progress
    if p is not None:
        assert p.step is None or p.step >= 0
        assert p.percent is None or p.percent >= 0
    s = LogSummary()
    s.add_line(line)
    s.set_live([line])
    s.finish(1)


def test_exception_words_and_line_numbers_are_not_counters() -> None:
    # a viewer's line numbers before the text; an exception's message that names a step
    info = parse_line("[231844] ValueError: Tried to step 100002 times. The specified number of total steps is 100000")
    assert info.progress is None
    s = summary_of(
        '[231843]     raise ValueError("Tried to step {} times")\n[231844] ValueError: Tried to step 100002 times'
    )
    assert s.failure == "Traceback: ValueError: Tried to step 100002 times"


def test_eval_line_loss_is_not_the_training_loss() -> None:
    s = summary_of(
        "Train: 1 [  32/33 (100%)]  Loss: 0.5411 (0.313)  LR: 5.000e-04\n"
        "Test: [  29/29]  Time: 0.043 (0.066)  Loss:  0.1036 (0.1876)  Acc@1: 100.0000 (93.9583)"
    )
    assert s.last_loss == 0.5411 and s.last_eval_loss == 0.1036
    assert s.progress is not None and s.progress.bar_percent == 100.0


def test_a_trainer_dict_with_a_global_step_is_the_runs_step() -> None:
    """PaddleNLP's trainer dicts carry the run's step as `global_step`, with no bar on the line."""
    info = parse_line("{'loss': 0.1252, 'learning_rate': 4e-05, 'global_step': 200, 'epoch': 2.67}")
    assert info.progress is not None and (info.progress.step, info.progress.scope) == (200, "run")
    assert info.metrics["loss"] == 0.1252
