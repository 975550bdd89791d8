"""Will a model fit: VRAM for weights, KV cache, activations and training state (docs/FIT.md).

Pure arithmetic on a model's shape (core/fit/models.py, or a config.json's text) and the user's
choices; sizes in GiB (2**30 bytes), as nvidia-smi's MiB count. The formulas and where each
comes from are in docs/FIT.md: weights are parameters x bytes; the KV cache 2 x layers x kv heads
x head dim x tokens x bytes; training follows accelerate's estimate-memory rules (fp32 master
weights, gradients, two Adam moments) and Korthikanti et al. for activations.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from gpu_tui.core.errors import InputError
from gpu_tui.core.fit.models import KnownModel, Shape, close_names, find_model
from gpu_tui.core.i18n import N_, _
from gpu_tui.core.models import GpuSample

__all__ = [
    "COMMON_CARDS",
    "DTYPES",
    "GIB",
    "TRAIN_MODES",
    "Card",
    "CardFit",
    "Estimate",
    "ModelSpec",
    "breakdown",
    "cheapest_fit",
    "count_params",
    "estimate",
    "estimate_json",
    "fit_cards",
    "instance_card",
    "lora_params",
    "parse_count",
    "shape_from_config",
    "spec_from_config",
    "spec_from_name",
]

GIB = float(2**30)

DTYPES: dict[str, float] = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "int8": 1.0, "int4": 0.5}
"""Bytes per weight."""
TRAIN_MODES = ("none", "lora", "full")

INFERENCE_OVERHEAD = 0.2
"""Activations while serving, as a share of the weights: EleutherAI's "up to 20%"."""
LORA_RANK = 16
LORA_SHARE_WITHOUT_SHAPE = 0.005
"""Trainable share of a model known only by its size: r=16 on every projection of Llama-3.1-8B
or Qwen2.5-7B trains 0.52-0.53% of it."""
ACTIVATION_BYTES_PER_LAYER = 34
"""Korthikanti et al. (2022): 34 x seq x batch x hidden bytes a layer in 16-bit, flash attention
(no stored attention matrix), no recomputation."""


@dataclass(frozen=True, slots=True)
class ModelSpec:
    name: str
    params: int
    shape: Shape | None = None
    """None when only a parameter count is known: no KV cache or training activations then."""


@dataclass(frozen=True, slots=True)
class Estimate:
    model: str
    params: int
    dtype: str
    context: int
    batch: int
    train: str
    weights_gib: float
    kv_cache_gib: float | None
    activations_gib: float | None
    optimizer_gib: float | None
    notes: tuple[str, ...] = ()
    """English, marked: `_()` them where shown."""

    @property
    def params_billion(self) -> float:
        return self.params / 1e9

    @property
    def total_gib(self) -> float:
        parts = (self.weights_gib, self.kv_cache_gib, self.activations_gib, self.optimizer_gib)
        return sum(p for p in parts if p is not None)


@dataclass(frozen=True, slots=True)
class Card:
    gpu: str
    memory_mib: int
    instance: str | None = None
    """None for a common rentable card, not one of the user's."""
    rate: float | None = None
    """The instance's hourly_rate (the whole instance, all its GPUs)."""
    count: int = 1
    seen_at: float | None = None
    """When its GPUs were read, where that was not just now (the CLI's cache)."""

    @property
    def memory_gib(self) -> float:
        return self.memory_mib / 1024


@dataclass(frozen=True, slots=True)
class CardFit:
    card: Card
    fits: bool | None
    """None: the instance's GPUs are not known."""


COMMON_CARDS: tuple[Card, ...] = (
    Card("24 GB (RTX 4090 / 3090)", 24564),
    Card("32 GB (RTX 5090)", 32607),
    Card("40 GB (A100 40GB)", 40960),
    Card("48 GB (L40S / RTX A6000)", 46068),
    Card("80 GB (A100 / H100 80GB)", 81559),
    Card("141 GB (H200)", 143771),
)
"""memory.total as nvidia-smi reports it, the smaller card of each class (tests/data/nvidia-smi:
the 4090, the L40S (an A6000 has 49140), the H100 (an A100 has 81920), a rented H200; the 5090
and the A100 40GB as NVIDIA's spec sheets give them)."""


# ----- parameters
def _attention_params(s: Shape) -> int:
    if s.mla:
        q_out = s.heads * (s.head_dim + s.rope_head_dim)
        q = s.hidden * s.q_lora_rank + s.q_lora_rank + s.q_lora_rank * q_out if s.q_lora_rank else s.hidden * q_out
        kv_a = s.hidden * (s.kv_lora_rank + s.rope_head_dim) + s.kv_lora_rank
        kv_b = s.kv_lora_rank * s.heads * (s.head_dim + s.v_head_dim)
        return q + kv_a + kv_b + s.heads * s.v_head_dim * s.hidden
    q_out, kv_out = s.heads * s.head_dim, s.kv_heads * s.head_dim
    n = s.hidden * q_out + 2 * s.hidden * kv_out + q_out * s.hidden
    if s.qkv_bias:
        n += q_out + 2 * kv_out
    if s.qk_norm:
        n += 2 * s.head_dim
    return n


def count_params(s: Shape) -> int:
    """Every weight of the causal-LM model (embedding, layers, final norm, output layer)."""
    dense_mlp = 3 * s.hidden * s.intermediate  # gate, up, down
    if s.experts:
        moe_mlp = (s.experts + s.shared_experts) * 3 * s.hidden * s.expert_intermediate + s.hidden * s.experts
        if s.shared_expert_intermediate:
            moe_mlp += 3 * s.hidden * s.shared_expert_intermediate + s.hidden
        if s.mla:  # DeepSeek-V3's router keeps a score-correction bias per expert
            moe_mlp += s.experts
        mlp_total = s.dense_layers * dense_mlp + (s.layers - s.dense_layers) * moe_mlp
    else:
        mlp_total = s.layers * dense_mlp
    per_layer = _attention_params(s) + s.norms_per_layer * s.hidden
    embedding = s.vocab * s.hidden * (1 if s.tied else 2)
    return s.layers * per_layer + mlp_total + embedding + s.hidden


def lora_params(s: Shape, rank: int = LORA_RANK) -> int:
    """LoRA A and B (rank x (in + out)) on q, k, v, o and, in a dense model, gate, up and down."""
    q_out = s.heads * (s.v_head_dim if s.mla else s.head_dim)
    kv_out = (s.heads * s.v_head_dim) if s.mla else s.kv_heads * s.head_dim
    per_layer = (s.hidden + q_out) + 2 * (s.hidden + kv_out) + (q_out + s.hidden)
    if not s.experts:
        per_layer += 3 * (s.hidden + s.intermediate)
    return s.layers * rank * per_layer


def kv_elements_per_token(s: Shape) -> int:
    """Numbers cached per token: K and V for each kv head, or MLA's one compressed latent."""
    if s.mla:
        return s.layers * (s.kv_lora_rank + s.rope_head_dim)
    return 2 * s.layers * s.kv_heads * s.head_dim


# ----- the estimate
def estimate(spec: ModelSpec, dtype: str, context: int, batch: int, train: str) -> Estimate:
    """What `spec` needs in `dtype`, serving (`train="none"`) `batch` sequences of `context`
    tokens, or fine-tuning on them (`lora`, `full`)."""
    if dtype not in DTYPES:
        raise InputError(
            _("--dtype must be one of {choices}, got {got!r}").format(choices=", ".join(DTYPES), got=dtype)
        )
    if train not in TRAIN_MODES:
        raise InputError(_("--train must be none, lora or full, got {got!r}").format(got=train))
    if train == "full" and DTYPES[dtype] < 2:
        raise InputError(
            _(
                "full fine-tuning needs fp32, bf16 or fp16 weights: use --train lora with "
                "{dtype} (QLoRA), or --dtype bf16"
            ).format(dtype=dtype)
        )
    p, s = spec.params, spec.shape
    notes: list[str] = []
    weights = p * DTYPES[dtype]
    kv: float | None = None
    act: float | None = None
    opt: float | None = None
    # activations and the cache are 16-bit unless everything is fp32 (quantised weights still
    # compute and cache in bf16)
    act_bytes = 4.0 if dtype == "fp32" else 2.0
    if train == "none":
        act = INFERENCE_OVERHEAD * weights
        if s is not None:
            kv = kv_elements_per_token(s) * context * batch * act_bytes
        else:
            notes.append(
                N_(
                    "KV cache not counted: the size alone does not give layers and heads "
                    "(name a model or give its config.json)"
                )
            )
    else:
        if train == "full":
            # accelerate: fp32 master weights (mixed precision only), fp32 gradients, Adam m and v
            opt = p * (12.0 if dtype == "fp32" else 16.0)
        else:
            trainable = lora_params(s) if s is not None else round(p * LORA_SHARE_WITHOUT_SHAPE)
            opt = trainable * 16.0  # fp32 adapter + its gradient + Adam m and v
        if s is not None:
            tokens = context * batch
            act = ACTIVATION_BYTES_PER_LAYER * tokens * s.hidden * s.layers * act_bytes / 2
            act += tokens * s.vocab * 4.0  # the logits, upcast to fp32 for the loss
        else:
            notes.append(
                N_(
                    "activations not counted: the size alone does not give layers and width "
                    "(name a model or give its config.json)"
                )
            )
    return Estimate(
        spec.name,
        p,
        dtype,
        context,
        batch,
        train,
        weights / GIB,
        None if kv is None else kv / GIB,
        None if act is None else act / GIB,
        None if opt is None else opt / GIB,
        tuple(notes),
    )


def instance_card(
    name: str, rate: float, gpus: tuple[GpuSample, ...] | list[GpuSample], seen_at: float | None = None
) -> Card:
    """An instance as one card: its largest GPU (a model must fit on one), and how many it has;
    memory 0 when none reported its size."""
    sized = [g for g in gpus if g.memory_total_mib]
    big = max(sized, key=lambda g: g.memory_total_mib or 0, default=None)
    if big is None:
        return Card("", 0, instance=name, rate=rate)
    gpu = (big.name or "GPU").removeprefix("NVIDIA ").removeprefix("GeForce ")
    return Card(gpu, big.memory_total_mib or 0, instance=name, rate=rate, count=len(sized), seen_at=seen_at)


def fit_cards(est: Estimate, cards: list[Card] | tuple[Card, ...]) -> list[CardFit]:
    """Does the estimate fit on one card of each (a card of memory 0 is unknown)."""
    return [CardFit(c, None if c.memory_mib <= 0 else est.total_gib <= c.memory_gib) for c in cards]


def cheapest_fit(fits: list[CardFit]) -> CardFit | None:
    """The user's cheapest instance (hourly_rate) whose card holds it; an instance without a rate
    (0: not set in the config, shown as `-`) only when no priced one holds it."""
    mine = [f for f in fits if f.fits and f.card.instance is not None and f.card.rate is not None]
    return min(mine, key=lambda f: (not f.card.rate, f.card.rate or 0.0, f.card.memory_mib), default=None)


def breakdown(est: Estimate) -> list[tuple[str, float | None]]:
    """(label, GiB) rows in the order shown; labels English, marked; None: does not apply."""
    return [
        (N_("weights"), est.weights_gib),
        (N_("KV cache"), est.kv_cache_gib),
        (N_("activations"), est.activations_gib),
        (N_("gradients + optimizer"), est.optimizer_gib),
    ]


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 2)


def estimate_json(est: Estimate, fits: list[CardFit]) -> dict[str, Any]:
    """The CONTRACTS.md `fit --json` shape; a key that does not apply is null."""
    return {
        "model": est.model,
        "params_billion": round(est.params_billion, 3),
        "dtype": est.dtype,
        "context": est.context,
        "batch": est.batch,
        "train": est.train,
        "weights_gib": _round(est.weights_gib),
        "kv_cache_gib": _round(est.kv_cache_gib),
        "activations_gib": _round(est.activations_gib),
        "optimizer_gib": _round(est.optimizer_gib),
        "total_gib": _round(est.total_gib),
        "fits": [
            {
                "instance": f.card.instance,
                "gpu": f.card.gpu or None,
                "memory_gib": _round(f.card.memory_gib) if f.card.memory_mib > 0 else None,
                "fits": f.fits,
            }
            for f in fits
        ],
    }


# ----- what MODEL means
_COUNT = re.compile(r"([0-9]+(?:\.[0-9]+)?|\.[0-9]+)\s*([bBmM])")


def parse_count(text: str) -> int | None:
    """`7b`, `0.5B`, `1.5b`, `350m` -> parameters; None when it is not a count."""
    m = _COUNT.fullmatch(text.strip())
    if not m:
        return None
    value = float(m.group(1)) * (1e9 if m.group(2) in "bB" else 1e6)
    return round(value) if value >= 1 else None


def spec_from_name(text: str) -> ModelSpec:
    """A parameter count or a name from the built-in table; InputError with close names else."""
    count = parse_count(text)
    if count is not None:
        if count > 5e12:
            raise InputError(
                _("{text!r} is more than 5000b parameters: give the size in billions, like 7b or 0.5b").format(
                    text=text
                )
            )
        return ModelSpec(text.strip().lower(), count)
    known: KnownModel | None = find_model(text)
    if known is not None:
        return ModelSpec(known.name, count_params(known.shape), known.shape)
    close = close_names(text)
    hint = _(" (did you mean {names}?)").format(names=", ".join(close)) if close else ""
    raise InputError(
        _(
            "unknown model {text!r}{hint}: give a size like 7b, a config.json path, or a name from `gpu-tui fit --list`"
        ).format(text=text, hint=hint)
    )


def _int(cfg: dict[str, Any], *keys: str, default: int | None = None) -> int:
    for k in keys:
        v = cfg.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            return v
    if default is not None:
        return default
    raise ValueError(keys[0])


def shape_from_config(cfg: dict[str, Any]) -> Shape:
    """A Hugging Face config.json (Llama, Qwen2/3 and their MoE, Mistral, Mixtral, Gemma, Yi,
    DeepSeek-V3, GLM-4's chatglm form) -> Shape; ValueError naming the missing field."""
    if isinstance(cfg.get("text_config"), dict):  # multimodal wrappers keep the LM inside
        cfg = {**cfg["text_config"], **{k: v for k, v in cfg.items() if k in ("tie_word_embeddings",)}}
    hidden = _int(cfg, "hidden_size", "n_embd", "d_model")
    layers = _int(cfg, "num_hidden_layers", "num_layers", "n_layer")
    heads = _int(cfg, "num_attention_heads", "n_head")
    if heads == 0:
        raise ValueError("num_attention_heads")
    kv_heads = _int(cfg, "num_key_value_heads", "multi_query_group_num", default=heads)
    head_dim = _int(cfg, "head_dim", "kv_channels", "qk_nope_head_dim", default=hidden // heads)
    model_type = str(cfg.get("model_type", ""))
    experts = _int(cfg, "num_local_experts", "num_experts", "n_routed_experts", default=0)
    return Shape(
        layers=layers,
        hidden=hidden,
        heads=heads,
        kv_heads=kv_heads,
        head_dim=head_dim,
        intermediate=_int(cfg, "intermediate_size", "ffn_hidden_size", default=4 * hidden),
        vocab=_int(cfg, "vocab_size", "padded_vocab_size"),
        tied=bool(cfg.get("tie_word_embeddings", model_type.startswith("gemma"))),
        qkv_bias=bool(cfg.get("attention_bias") or cfg.get("add_qkv_bias") or model_type in ("qwen2", "qwen2_moe")),
        qk_norm=model_type.startswith("qwen3"),
        norms_per_layer=4 if model_type in ("gemma2", "gemma3_text") else 2,
        experts=experts,
        expert_intermediate=_int(cfg, "moe_intermediate_size", default=_int(cfg, "intermediate_size", default=0))
        if experts
        else 0,
        shared_experts=_int(cfg, "n_shared_experts", default=0),
        shared_expert_intermediate=_int(cfg, "shared_expert_intermediate_size", default=0) if experts else 0,
        dense_layers=_int(cfg, "first_k_dense_replace", default=0),
        q_lora_rank=_int(cfg, "q_lora_rank", default=0) if cfg.get("q_lora_rank") else 0,
        kv_lora_rank=_int(cfg, "kv_lora_rank", default=0) if cfg.get("kv_lora_rank") else 0,
        rope_head_dim=_int(cfg, "qk_rope_head_dim", default=0),
        v_head_dim=_int(cfg, "v_head_dim", default=0),
    )


def spec_from_config(text: str, where: str) -> ModelSpec:
    """config.json's text (read by the caller) -> ModelSpec; InputError naming `where`."""
    try:
        cfg = json.loads(text)
    except ValueError as exc:
        raise InputError(
            _("{where} is not JSON ({why}): give a Hugging Face config.json").format(where=where, why=exc)
        ) from None
    if not isinstance(cfg, dict):
        raise InputError(_("{where} is not a config.json (no object at the top)").format(where=where))
    try:
        shape = shape_from_config(cfg)
    except ValueError as exc:
        raise InputError(
            _("{where} has no usable {field!r}: is it a decoder model's config.json?").format(
                where=where, field=str(exc)
            )
        ) from None
    name = str(cfg.get("_name_or_path") or cfg.get("model_type") or where)
    return ModelSpec(name, count_params(shape), shape)
