"""core/fit/oomfit: what `gpu-tui fit` says of an OOM job's model, read off the job's command and
log; the card's size from PyTorch's OOM messages in the real corpus (both phrasings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_tui.config.language import catalog
from gpu_tui.core.fit.estimate import estimate, spec_from_name
from gpu_tui.core.fit.oomfit import gpu_capacity_gib, oom_fit, oom_fit_text
from gpu_tui.core.i18n import using

REAL = Path(__file__).resolve().parents[1] / "data" / "logs" / "real" / "oom"


@pytest.mark.parametrize(
    ("log", "gib"),
    [
        ("echomimic-torch-outofmemoryerror-new-phrasing.log", 15.69),  # `GPU 0 has a total capacity of`
        ("ssn-runtimeerror-old-phrasing.log", 23.69),  # 1.x `(GPU 0; 23.69 GiB total capacity; ...`
    ],
)
def test_the_cards_size_as_the_oom_message_states_it(log: str, gib: float) -> None:
    assert gpu_capacity_gib((REAL / log).read_text(encoding="utf-8", errors="replace")) == gib


def test_a_hub_id_in_the_command_with_lora_its_length_and_batch() -> None:
    command = (
        "llamafactory-cli train --model_name_or_path Qwen/Qwen2.5-7B-Instruct --finetuning_type lora "
        "--cutoff_len 2048 --per_device_train_batch_size 4"
    )
    log = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
    log += "GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free."
    fit = oom_fit(command, log)
    assert fit is not None
    want = estimate(spec_from_name("qwen2.5-7b"), "bf16", 2048, 4, "lora").total_gib
    assert (fit.model, fit.context, fit.batch, fit.needs, fit.gpu_gib) == (
        "qwen2.5-7b",
        2048,
        4,
        (("lora", want),),
        23.65,
    )


def test_a_model_named_only_in_the_log_and_no_training_mode_gives_both() -> None:
    log = "loading weights from /root/autodl-tmp/models/Qwen2.5-14B-Instruct/model.safetensors\n"
    fit = oom_fit("bash run.sh", log)
    assert fit is not None and fit.model == "qwen2.5-14b" and [m for m, _ in fit.needs] == ["lora", "full"]
    assert fit.context == 4096 and fit.batch == 1 and fit.gpu_gib is None


def test_a_size_in_an_unknown_name_and_full_fine_tuning() -> None:
    fit = oom_fit("swift sft --model my-org/llama-2-13b-chat --train_type full", "")
    assert fit is not None and fit.model == "llama-2-13b-chat" and [m for m, _ in fit.needs] == ["full"]
    assert fit.needs[0][1] == estimate(spec_from_name("13b"), "bf16", 4096, 1, "full").total_gib


def test_nothing_said_of_a_job_that_names_no_model() -> None:
    assert oom_fit("python train.py --lr 3e-4 --epochs 10", "epoch 1 loss 2.3\nCUDA out of memory.") is None


def test_the_line_in_english_and_chinese() -> None:
    fit = oom_fit("train --model Qwen/Qwen2.5-7B-Instruct --lora", "GPU 0 has a total capacity of 23.65 GiB of which")
    assert fit is not None
    text = oom_fit_text(fit)
    assert text.startswith("`gpu-tui fit`: qwen2.5-7b needs about ") and text.endswith("this GPU has 23.6 GiB")
    assert "with LoRA" in text
    with using(catalog("zh-CN"), "zh-CN"):
        zh = oom_fit_text(fit)
    assert "`gpu-tui fit`" in zh and "用 LoRA" in zh and "23.6 GiB" in zh
