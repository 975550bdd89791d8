"""The shapes of popular open models, as their config.json files give them, for `gpu-tui fit`.

Each entry names the config.json it was read from (docs/FIT.md lists where each was checked).
Only what the memory formulas need is kept: layers, widths, heads, the vocabulary, whether the
embedding is tied, and the mixture-of-experts or multi-head-latent-attention sizes where a model
has them. Parameter counts are computed from these (core/fit/estimate.py `count_params`), not copied.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

__all__ = ["MODELS", "KnownModel", "Shape", "close_names", "find_model"]


@dataclass(frozen=True, slots=True)
class Shape:
    """A decoder-only transformer, in config.json's terms."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    intermediate: int
    vocab: int
    tied: bool = False
    """tie_word_embeddings: the output layer reuses the embedding."""
    qkv_bias: bool = False
    """Qwen2 and GLM-4 put a bias on q, k and v."""
    qk_norm: bool = False
    """Qwen3 normalises q and k per head (two head_dim-sized weights a layer)."""
    norms_per_layer: int = 2
    """RMSNorm weights per layer (Gemma 2 has four)."""
    experts: int = 0
    """Routed experts per MoE layer (0: a dense model)."""
    expert_intermediate: int = 0
    shared_experts: int = 0
    shared_expert_intermediate: int = 0
    """Qwen2-MoE's one shared expert, wider than the routed ones (with its own sigmoid gate)."""
    dense_layers: int = 0
    """Leading layers with a dense MLP in a MoE model (DeepSeek's first_k_dense_replace)."""
    q_lora_rank: int = 0
    """Multi-head latent attention (DeepSeek-V3): 0 for ordinary attention."""
    kv_lora_rank: int = 0
    rope_head_dim: int = 0
    v_head_dim: int = 0

    @property
    def mla(self) -> bool:
        return self.kv_lora_rank > 0


@dataclass(frozen=True, slots=True)
class KnownModel:
    name: str
    """What the user types (lower case, as in `gpu-tui fit qwen2.5-7b`)."""
    hf_id: str
    shape: Shape

    @property
    def source(self) -> str:
        return f"https://huggingface.co/{self.hf_id}/blob/main/config.json"


def _qwen25(layers: int, hidden: int, heads: int, kv: int, inter: int, vocab: int, tied: bool) -> Shape:
    return Shape(layers, hidden, heads, kv, hidden // heads, inter, vocab, tied=tied, qkv_bias=True)


def _qwen3(layers: int, hidden: int, heads: int, kv: int, inter: int, tied: bool) -> Shape:
    return Shape(layers, hidden, heads, kv, 128, inter, 151936, tied=tied, qk_norm=True)


def _llama(layers: int, hidden: int, heads: int, kv: int, inter: int, vocab: int, tied: bool = False) -> Shape:
    return Shape(layers, hidden, heads, kv, hidden // heads, inter, vocab, tied=tied)


_QWEN25_7B = _qwen25(28, 3584, 28, 4, 18944, 152064, False)
_QWEN25_14B = _qwen25(48, 5120, 40, 8, 13824, 152064, False)
_QWEN25_32B = _qwen25(64, 5120, 40, 8, 27648, 152064, False)
_LLAMA31_8B = _llama(32, 4096, 32, 8, 14336, 128256)
_LLAMA31_70B = _llama(80, 8192, 64, 8, 28672, 128256)
_DEEPSEEK_V3 = Shape(
    61,
    7168,
    128,
    128,
    128,
    18432,
    129280,
    experts=256,
    expert_intermediate=2048,
    shared_experts=1,
    dense_layers=3,
    q_lora_rank=1536,
    kv_lora_rank=512,
    rope_head_dim=64,
    v_head_dim=128,
)

MODELS: tuple[KnownModel, ...] = (
    KnownModel("qwen2.5-0.5b", "Qwen/Qwen2.5-0.5B-Instruct", _qwen25(24, 896, 14, 2, 4864, 151936, True)),
    KnownModel("qwen2.5-1.5b", "Qwen/Qwen2.5-1.5B-Instruct", _qwen25(28, 1536, 12, 2, 8960, 151936, True)),
    KnownModel("qwen2.5-3b", "Qwen/Qwen2.5-3B-Instruct", _qwen25(36, 2048, 16, 2, 11008, 151936, True)),
    KnownModel("qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct", _QWEN25_7B),
    KnownModel("qwen2.5-14b", "Qwen/Qwen2.5-14B-Instruct", _QWEN25_14B),
    KnownModel("qwen2.5-32b", "Qwen/Qwen2.5-32B-Instruct", _QWEN25_32B),
    KnownModel("qwen2.5-72b", "Qwen/Qwen2.5-72B-Instruct", _qwen25(80, 8192, 64, 8, 29568, 152064, False)),
    KnownModel("qwen3-0.6b", "Qwen/Qwen3-0.6B", _qwen3(28, 1024, 16, 8, 3072, True)),
    KnownModel("qwen3-1.7b", "Qwen/Qwen3-1.7B", _qwen3(28, 2048, 16, 8, 6144, True)),
    KnownModel("qwen3-4b", "Qwen/Qwen3-4B", _qwen3(36, 2560, 32, 8, 9728, True)),
    KnownModel("qwen3-8b", "Qwen/Qwen3-8B", _qwen3(36, 4096, 32, 8, 12288, False)),
    KnownModel("qwen3-14b", "Qwen/Qwen3-14B", _qwen3(40, 5120, 40, 8, 17408, False)),
    KnownModel("qwen3-32b", "Qwen/Qwen3-32B", _qwen3(64, 5120, 64, 8, 25600, False)),
    KnownModel(
        "qwen3-30b-a3b",
        "Qwen/Qwen3-30B-A3B",
        Shape(48, 2048, 32, 4, 128, 6144, 151936, qk_norm=True, experts=128, expert_intermediate=768),
    ),
    KnownModel(
        "qwen3-235b-a22b",
        "Qwen/Qwen3-235B-A22B",
        Shape(94, 4096, 64, 4, 128, 12288, 151936, qk_norm=True, experts=128, expert_intermediate=1536),
    ),
    KnownModel("llama-3.2-1b", "meta-llama/Llama-3.2-1B-Instruct", Shape(16, 2048, 32, 8, 64, 8192, 128256, tied=True)),
    KnownModel(
        "llama-3.2-3b", "meta-llama/Llama-3.2-3B-Instruct", Shape(28, 3072, 24, 8, 128, 8192, 128256, tied=True)
    ),
    KnownModel("llama-3.1-8b", "meta-llama/Llama-3.1-8B-Instruct", _LLAMA31_8B),
    KnownModel("llama-3.1-70b", "meta-llama/Llama-3.1-70B-Instruct", _LLAMA31_70B),
    KnownModel("llama-3.3-70b", "meta-llama/Llama-3.3-70B-Instruct", _LLAMA31_70B),
    KnownModel("llama-2-7b", "meta-llama/Llama-2-7b-hf", _llama(32, 4096, 32, 32, 11008, 32000)),
    KnownModel("llama-2-70b", "meta-llama/Llama-2-70b-hf", _llama(80, 8192, 64, 8, 28672, 32000)),
    KnownModel(
        "deepseek-r1-distill-qwen-1.5b",
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B",
        _qwen25(28, 1536, 12, 2, 8960, 151936, False),
    ),
    KnownModel("deepseek-r1-distill-qwen-7b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", _QWEN25_7B),
    KnownModel("deepseek-r1-distill-qwen-14b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B", _QWEN25_14B),
    KnownModel("deepseek-r1-distill-qwen-32b", "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B", _QWEN25_32B),
    KnownModel("deepseek-r1-distill-llama-8b", "deepseek-ai/DeepSeek-R1-Distill-Llama-8B", _LLAMA31_8B),
    KnownModel("deepseek-r1-distill-llama-70b", "deepseek-ai/DeepSeek-R1-Distill-Llama-70B", _LLAMA31_70B),
    KnownModel("deepseek-v3", "deepseek-ai/DeepSeek-V3", _DEEPSEEK_V3),
    KnownModel("deepseek-r1", "deepseek-ai/DeepSeek-R1", _DEEPSEEK_V3),
    KnownModel("glm-4-9b", "THUDM/glm-4-9b-chat", Shape(40, 4096, 32, 2, 128, 13696, 151552, qkv_bias=True)),
    KnownModel("mistral-7b", "mistralai/Mistral-7B-Instruct-v0.3", _llama(32, 4096, 32, 8, 14336, 32768)),
    KnownModel("mistral-7b-v0.1", "mistralai/Mistral-7B-v0.1", _llama(32, 4096, 32, 8, 14336, 32000)),
    KnownModel("mistral-nemo-12b", "mistralai/Mistral-Nemo-Instruct-2407", Shape(40, 5120, 32, 8, 128, 14336, 131072)),
    KnownModel(
        "mixtral-8x7b",
        "mistralai/Mixtral-8x7B-Instruct-v0.1",
        Shape(32, 4096, 32, 8, 128, 14336, 32000, experts=8, expert_intermediate=14336),
    ),
    KnownModel("yi-1.5-6b", "01-ai/Yi-1.5-6B-Chat", _llama(32, 4096, 32, 4, 11008, 64000)),
    KnownModel("yi-1.5-9b", "01-ai/Yi-1.5-9B", _llama(48, 4096, 32, 4, 11008, 64000)),
    KnownModel("yi-1.5-34b", "01-ai/Yi-1.5-34B-Chat", _llama(60, 7168, 56, 8, 20480, 64000)),
    KnownModel("gemma-2b", "google/gemma-2b", Shape(18, 2048, 8, 1, 256, 16384, 256000, tied=True)),
    KnownModel(
        "gemma-2-2b", "google/gemma-2-2b-it", Shape(26, 2304, 8, 4, 256, 9216, 256000, tied=True, norms_per_layer=4)
    ),
    KnownModel(
        "gemma-2-9b", "google/gemma-2-9b-it", Shape(42, 3584, 16, 8, 256, 14336, 256000, tied=True, norms_per_layer=4)
    ),
    KnownModel(
        "gemma-2-27b",
        "google/gemma-2-27b-it",
        Shape(46, 4608, 32, 16, 128, 36864, 256000, tied=True, norms_per_layer=4),
    ),
)

_BY_NAME = {m.name: m for m in MODELS}


def _key(text: str) -> str:
    """`Qwen/Qwen2.5-7B-Instruct`, `qwen2.5-7b-instruct` and `Qwen2.5-7B` name one entry."""
    word = text.strip().lower().rsplit("/", 1)[-1].replace("_", "-")
    for suffix in ("-instruct", "-chat", "-hf", "-it", "-base"):
        word = word.removesuffix(suffix)
    return word


def find_model(text: str) -> KnownModel | None:
    key = _key(text)
    if key in _BY_NAME:
        return _BY_NAME[key]
    for m in MODELS:  # the Hub id as printed on the model's page
        if _key(m.hf_id) == key:
            return m
    return None


def close_names(text: str, n: int = 3) -> list[str]:
    """The table's names nearest to `text`, for a did-you-mean."""
    return difflib.get_close_matches(_key(text), list(_BY_NAME), n=n, cutoff=0.5)
