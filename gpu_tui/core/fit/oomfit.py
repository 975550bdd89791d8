"""What `gpu-tui fit` says about a job that ran out of GPU memory (issue 25): the model the job
named (its command, else its log), how it trained (LoRA or full), the tokens and batch it asked
for, against the card's size as PyTorch's OOM message states it.

Only what the job itself says is used; where it names no model nothing is said. Read by the
laptop (services/jobs/runner) from the command and the log window it already has; the
instance's notification sender does not carry the model table, so a phone gets the plain hint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpu_tui.core.errors import InputError
from gpu_tui.core.fit.estimate import ModelSpec, estimate, spec_from_name
from gpu_tui.core.fit.models import find_model
from gpu_tui.core.i18n import N_, _

__all__ = ["OomFit", "TEXTS", "oom_fit", "oom_fit_text", "gpu_capacity_gib"]

DEFAULT_CONTEXT = 4096  # as `gpu-tui fit`

# PyTorch >= 2.0 `Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which
# ...`; 1.x `Tried to allocate 20.00 MiB (GPU 0; 23.65 GiB total capacity; 21.90 GiB already ...`
_CAPACITY = re.compile(
    r"GPU \d+ has a total capacity of (\d+(?:\.\d+)?) (GiB|MiB)|\(GPU \d+; (\d+(?:\.\d+)?) (GiB|MiB) total capacity"
)
# A Hub id (`Qwen/Qwen2.5-7B-Instruct`), a path's last part, or a name with a size (`llama-2-13b`)
_MODEL_WORD = re.compile(r"[A-Za-z][\w.-]*/[\w.-]+|[A-Za-z][\w.]*(?:-[\w.]+)*-\d+(?:\.\d+)?[bB](?![\w])[\w.-]*")
_SIZE = re.compile(r"-(\d+(?:\.\d+)?)[bB](?![a-zA-Z0-9])")
_CONTEXT = re.compile(
    r"\b(?:cutoff_len|max_seq_length|max_seq_len|model_max_length|max_length|seq_length)['\"]?\s*[:= ]\s*(\d{3,6})\b"
)
_BATCH = re.compile(r"\b(?:per_device_train_batch_size|micro_batch_size|batch_size)['\"]?\s*[:= ]\s*(\d{1,4})\b")
_LORA = re.compile(r"lora|\bpeft\b", re.IGNORECASE)
_FULL = re.compile(r"\b(?:finetuning_type|train_type)['\"]?\s*[:= ]\s*full\b|\bfull[_-]?(?:finetune|ft)\b")


@dataclass(frozen=True, slots=True)
class OomFit:
    model: str
    context: int
    batch: int
    needs: tuple[tuple[str, float], ...]
    """(train mode, GiB) for each way the job may have trained: `lora`, `full`."""
    gpu_gib: float | None
    """The card's size as the OOM message states it; None where it does not."""


def gpu_capacity_gib(text: str) -> float | None:
    """The card's total memory, in GiB, from the last PyTorch OOM message in `text`."""
    found = None
    for m in _CAPACITY.finditer(text):
        value, unit = (m[1], m[2]) if m[1] else (m[3], m[4])
        found = float(value) / (1024 if unit == "MiB" else 1)
    return found


def _model(text: str) -> ModelSpec | None:
    sized: ModelSpec | None = None
    for word in _MODEL_WORD.findall(text):
        word = word.rstrip(".-/")
        known = find_model(word)
        if known is not None:
            return spec_from_name(known.name)
        size = _SIZE.search(word.rsplit("/", 1)[-1])
        if size is not None and sized is None:
            try:
                spec = spec_from_name(size[1] + "b")
            except InputError:
                continue
            sized = ModelSpec(word.rsplit("/", 1)[-1], spec.params)
    return sized


def oom_fit(command: str, log: str) -> OomFit | None:
    """What fit says for a job whose `command` (and, where the command names none, `log`) names
    its model; None where neither does."""
    spec = _model(command) or _model(log)
    if spec is None:
        return None
    said = command + "\n" + log
    context_m = _CONTEXT.search(said)
    batch_m = _BATCH.search(said)
    context = int(context_m[1]) if context_m else DEFAULT_CONTEXT
    batch = max(1, int(batch_m[1])) if batch_m else 1
    if _FULL.search(said):
        modes: tuple[str, ...] = ("full",)
    elif _LORA.search(said):
        modes = ("lora",)
    else:
        modes = ("lora", "full")
    needs = tuple((mode, estimate(spec, "bf16", context, batch, mode).total_gib) for mode in modes)
    return OomFit(spec.name, context, batch, needs, gpu_capacity_gib(log))


_MODE_WORDS = {"lora": N_("with LoRA"), "full": N_("fully fine-tuned")}
_ABOUT = N_("about {gib:.1f} GiB {how}")
_NEEDS = N_("`gpu-tui fit`: {model} needs {needs} (bf16, {context} tokens x {batch})")
_HAS = N_("; this GPU has {gib:.1f} GiB")
TEXTS = (*_MODE_WORDS.values(), _ABOUT, _NEEDS, _HAS)
"""Every message oom_fit_text says: the laptop translates them for the instance's sender."""


def oom_fit_text(fit: OomFit) -> str:
    """`gpu-tui fit: qwen2.5-7b needs about 19.8 GiB with LoRA (bf16, 4096 tokens x 1); this GPU has 23.6 GiB`"""
    needs = ", ".join(_(_ABOUT).format(gib=gib, how=_(_MODE_WORDS[mode])) for mode, gib in fit.needs)
    text = _(_NEEDS).format(model=fit.model, needs=needs, context=fit.context, batch=fit.batch)
    if fit.gpu_gib is not None:
        text += _(_HAS).format(gib=fit.gpu_gib)
    return text
