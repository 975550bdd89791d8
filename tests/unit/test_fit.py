"""`gpu-tui fit`: the formulas of docs/FIT.md against numbers worked out by hand, the built-in
table against the models' published sizes, config.json files, and the CLI (JSON, bad input).

GiB = 2**30 bytes. P = parameters. Each expected number is worked out in the comments from the
shape in the model's config.json, not taken from the code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpu_tui.core.errors import InputError
from gpu_tui.core.fit.estimate import (
    COMMON_CARDS,
    Card,
    cheapest_fit,
    count_params,
    estimate,
    estimate_json,
    fit_cards,
    parse_count,
    spec_from_config,
    spec_from_name,
)
from gpu_tui.core.fit.models import MODELS, find_model

GIB = 2**30


def approx(v: float) -> object:
    return pytest.approx(v, abs=0.005)


def test_qwen25_7b_bf16_inference() -> None:
    # Qwen2.5-7B: 28 layers, hidden 3584, 28 heads of 128, 4 kv heads, MLP 18944, vocab 152064, untied, qkv bias.
    # a layer: q,o 2*3584*3584 = 25,690,112; k,v 2*3584*512 = 3,670,016; bias 3584+2*512 = 4,608;
    #   MLP 3*3584*18944 = 203,685,888; two norms 7,168 -> 233,057,792; x28 = 6,525,618,176
    # embedding + lm_head 2*152064*3584 = 1,089,994,752; final norm 3,584 -> P = 7,615,616,512
    est = estimate(spec_from_name("qwen2.5-7b"), "bf16", 4096, 1, "none")
    assert est.params == 7_615_616_512
    assert est.weights_gib == approx(2 * 7_615_616_512 / GIB)  # 14.185
    # KV: 2 (K,V) * 28 layers * 4 heads * 128 * 4096 tokens * 2 bytes = 234,881,024 B = 0.21875 GiB
    assert est.kv_cache_gib == pytest.approx(0.21875)
    assert est.activations_gib == approx(0.2 * 14.185)  # EleutherAI's 20% of the weights: 2.837
    assert est.optimizer_gib is None
    assert est.total_gib == approx(14.185 + 0.219 + 2.837)  # 17.24: fits a 24 GB card
    fits = fit_cards(est, COMMON_CARDS)
    assert [f.fits for f in fits] == [True] * 6


def test_llama31_8b_full_fine_tune_bf16() -> None:
    # Llama-3.1-8B: 32 layers, hidden 4096, 32 heads, 8 kv heads of 128, MLP 14336, vocab 128256, untied.
    # a layer: q,o 33,554,432 + k,v 8,388,608 + MLP 176,160,768 + norms 8,192 = 218,112,000; x32 = 6,979,584,000
    # embedding + lm_head 2*128256*4096 = 1,050,673,152; final norm 4,096 -> P = 8,030,261,248
    est = estimate(spec_from_name("llama-3.1-8b"), "bf16", 2048, 1, "full")
    assert est.params == 8_030_261_248
    assert est.weights_gib == approx(16_060_522_496 / GIB)  # 2P: 14.958
    # accelerate (mixed precision): fp32 master 4P + fp32 gradients 4P + Adam m, v 8P = 16P = 119.66 GiB
    assert est.optimizer_gib == approx(16 * 8_030_261_248 / GIB)
    # activations: 34 * 2048 tokens * 4096 * 32 layers = 9,126,805,504 B, logits 2048 * 128256 * 4 = 1,050,673,152
    assert est.activations_gib == approx(10_177_478_656 / GIB)  # 9.479
    assert est.kv_cache_gib is None  # no cache while training
    assert est.total_gib == approx(14.958 + 119.662 + 9.479)  # 144.10: no single card holds it
    assert not any(f.fits for f in fit_cards(est, COMMON_CARDS))


def test_mistral_7b_qlora_int4() -> None:
    # Mistral-7B-v0.1: like Llama-3.1-8B but vocab 32000: embedding + head 262,144,000 -> P = 7,241,732,096
    est = estimate(spec_from_name("mistral-7b-v0.1"), "int4", 4096, 2, "lora")
    assert est.params == 7_241_732_096
    assert est.weights_gib == approx(7_241_732_096 * 0.5 / GIB)  # 3.372
    # LoRA r=16 on q,k,v,o,gate,up,down: 32 layers * 16 * [(4096+4096) + 2*(4096+1024) + (4096+4096)
    #   + 3*(4096+14336)] = 512 * 81,920 = 41,943,040 trainable; fp32 weight+grad+m+v = 16 bytes each
    assert est.optimizer_gib == pytest.approx(41_943_040 * 16 / GIB)  # 0.625 exactly
    # activations (bf16 compute): 34 * 8192 tokens * 4096 * 32 = 36,507,222,016 + logits 8192*32000*4 = 1,048,576,000
    assert est.activations_gib == approx(37_555_798_016 / GIB)  # 34.977
    assert est.total_gib == approx(3.372 + 0.625 + 34.977)  # 38.97: a 40 GB A100, not a 32 GB card
    fits = {f.card.gpu: f.fits for f in fit_cards(est, COMMON_CARDS)}
    assert fits["32 GB (RTX 5090)"] is False and fits["40 GB (A100 40GB)"] is True


def test_deepseek_v3_mla_int4() -> None:
    # DeepSeek-V3: 61 layers (3 dense), hidden 7168, 128 heads, MLA q_lora 1536, kv_lora 512, rope 64,
    # nope 128, v 128; MLP 18432 dense, 256 routed + 1 shared experts of 2048; vocab 129280, untied.
    # attention: q 7168*1536 + 1536 + 1536*128*192 = 48,760,320; kv_a 7168*576 + 512 = 4,129,280;
    #   kv_b 512*128*256 = 16,777,216; o 128*128*7168 = 117,440,512 -> 187,107,328
    # dense layer: + 3*7168*18432 = 396,361,728 + norms 14,336 -> 583,483,392 (x3 = 1,750,450,176)
    # MoE layer: + 257*3*7168*2048 = 11,318,329,344 + router 7168*256 + 256 bias = 1,835,264
    #   + norms 14,336 -> 11,507,286,272 (x58 = 667,422,603,776)
    # embedding + head 2*129280*7168 = 1,853,358,080, final norm 7,168 -> P = 671,026,419,200
    est = estimate(spec_from_name("deepseek-v3"), "int4", 8192, 1, "none")
    assert est.params == 671_026_419_200
    assert est.weights_gib == approx(335_513_209_600 / GIB)  # 312.47
    # the cache holds MLA's latent: 61 layers * (512 + 64) * 8192 tokens * 2 bytes = 575,668,224 B
    assert est.kv_cache_gib == approx(575_668_224 / GIB)  # 0.536
    assert est.total_gib == approx(312.47 * 1.2 + 0.536)  # 375.50


def test_glm4_9b_long_context_fp16() -> None:
    # GLM-4-9B (chatglm config): 40 layers, hidden 4096, 32 heads of 128 (kv_channels), 2 kv groups,
    # ffn 13696, padded vocab 151552, untied, qkv bias.
    # a layer: q,o 2*16,777,216 + k,v 2*4096*256 = 2,097,152 + bias 4096+512 + MLP 3*4096*13696 = 168,296,448
    #   + norms 8,192 = 203,960,832; x40 = 8,158,433,280; embedding + head 2*151552*4096 = 1,241,513,984
    #   + final norm 4,096 -> P = 9,399,951,360
    est = estimate(spec_from_name("glm-4-9b"), "fp16", 32768, 1, "none")
    assert est.params == 9_399_951_360
    # KV: 2 * 40 * 2 * 128 * 32768 * 2 bytes = 1,342,177,280 B = 1.25 GiB
    assert est.kv_cache_gib == pytest.approx(1.25)
    assert est.total_gib == approx(18_799_902_720 / GIB * 1.2 + 1.25)  # 22.26: a 24 GB card with 1.7 spare
    assert fit_cards(est, COMMON_CARDS)[0].fits is True


def test_size_only_fp32_full_and_accelerates_bert_numbers() -> None:
    # 7b, fp32, full: weights 4P = 28e9 B = 26.077 GiB; gradients 4P + Adam 8P = 84e9 B = 78.231 GiB
    est = estimate(spec_from_name("7b"), "fp32", 2048, 1, "full")
    assert est.weights_gib == approx(28e9 / GIB) and est.optimizer_gib == approx(84e9 / GIB)
    assert est.activations_gib is None and est.kv_cache_gib is None and est.notes
    # accelerate's docs: bert-base-cased (108,310,272 parameters) is 413.18 MB in fp32 and 1.61 GB to
    # train with Adam in fp32 (binary units): 4P = 433,241,088 B = 413.18 MiB; 16P = 1.614 GiB
    bert = estimate(spec_from_name("0.108310272b"), "fp32", 512, 1, "full")
    assert bert.weights_gib * 1024 == pytest.approx(413.18, abs=0.01)
    assert bert.weights_gib + (bert.optimizer_gib or 0) == pytest.approx(1.614, abs=0.001)


# published sizes: each model card's "Number of Parameters" (or the Hub's safetensors count)
PUBLISHED_BILLIONS = {
    "qwen2.5-0.5b": 0.49,
    "qwen2.5-1.5b": 1.54,
    "qwen2.5-3b": 3.09,
    "qwen2.5-7b": 7.61,
    "qwen2.5-14b": 14.7,
    "qwen2.5-72b": 72.7,
    "qwen3-8b": 8.2,
    "qwen3-30b-a3b": 30.5,
    "qwen3-235b-a22b": 235.0,
    "llama-3.2-1b": 1.24,
    "llama-3.2-3b": 3.21,
    "llama-3.1-8b": 8.03,
    "llama-3.1-70b": 70.6,
    "llama-2-7b": 6.74,
    "llama-2-70b": 69.0,
    "deepseek-r1-distill-qwen-1.5b": 1.78,
    "deepseek-v3": 671.0,
    "glm-4-9b": 9.4,
    "mistral-7b": 7.25,
    "mixtral-8x7b": 46.7,
    "yi-1.5-34b": 34.4,
    "gemma-2b": 2.51,
    "gemma-2-9b": 9.24,
    "gemma-2-27b": 27.2,
    "qwen2.5-32b": 32.5,
    "qwen3-0.6b": 0.6,
    "qwen3-4b": 4.0,
    "qwen3-14b": 14.8,
    "qwen3-32b": 32.8,
    "mistral-nemo-12b": 12.2,
    "yi-1.5-6b": 6.06,
    "yi-1.5-9b": 8.83,
    "gemma-2-2b": 2.61,
}


@pytest.mark.parametrize(("name", "billions"), sorted(PUBLISHED_BILLIONS.items()))
def test_table_matches_published_sizes(name: str, billions: float) -> None:
    known = find_model(name)
    assert known is not None
    assert count_params(known.shape) / 1e9 == pytest.approx(billions, rel=0.01)


def test_every_model_is_listed_with_its_source_in_docs() -> None:
    fit_md = Path(__file__).parents[2] / "docs/FIT.md"
    doc = fit_md.read_text(encoding="utf-8")
    for m in MODELS:
        assert f"| `{m.name}` | [{m.hf_id}]({m.source}) |" in doc, m.name


def test_names_sizes_and_hub_ids() -> None:
    assert {m.name for m in MODELS} >= {"qwen2.5-7b", "qwen3-8b", "llama-3.1-8b", "glm-4-9b", "yi-1.5-9b"}
    assert find_model("Qwen/Qwen2.5-7B-Instruct") is find_model("qwen2.5-7b")
    assert parse_count("7b") == 7_000_000_000 and parse_count("1.5B") == 1_500_000_000
    assert parse_count("0.5b") == 500_000_000 and parse_count("350m") == 350_000_000
    assert parse_count("seven") is None and parse_count("7") is None
    with pytest.raises(InputError, match="did you mean qwen2.5-7b"):
        spec_from_name("qwen2.5-7bb")
    with pytest.raises(InputError, match="full fine-tuning needs fp32"):
        estimate(spec_from_name("7b"), "int4", 1, 1, "full")


QWEN25_7B_CONFIG = """{
  "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
  "eos_token_id": 151645, "hidden_act": "silu", "hidden_size": 3584, "initializer_range": 0.02,
  "intermediate_size": 18944, "max_position_embeddings": 32768, "max_window_layers": 28,
  "model_type": "qwen2", "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "sliding_window": 131072, "tie_word_embeddings": false,
  "torch_dtype": "bfloat16", "transformers_version": "4.43.1", "use_cache": true,
  "use_sliding_window": false, "vocab_size": 152064
}"""
"""Qwen/Qwen2.5-7B-Instruct's config.json as the Hub serves it."""

GLM4_CONFIG = """{
  "_name_or_path": "THUDM/glm-4-9b-chat", "model_type": "chatglm", "architectures": ["ChatGLMModel"],
  "add_bias_linear": false, "add_qkv_bias": true, "ffn_hidden_size": 13696, "hidden_size": 4096,
  "kv_channels": 128, "multi_query_attention": true, "multi_query_group_num": 2,
  "num_attention_heads": 32, "num_hidden_layers": 40, "num_layers": 40, "padded_vocab_size": 151552,
  "post_layer_norm": true, "rmsnorm": true, "seq_length": 131072, "tie_word_embeddings": false
}"""
"""THUDM/glm-4-9b-chat's config.json (its remote-code form), the fields that matter."""


def test_config_json_gives_the_same_as_the_table() -> None:
    for text, name in ((QWEN25_7B_CONFIG, "qwen2.5-7b"), (GLM4_CONFIG, "glm-4-9b")):
        spec = spec_from_config(text, "config.json")
        known = find_model(name)
        assert known is not None and spec.shape == known.shape and spec.params == count_params(known.shape)
    with pytest.raises(InputError, match="is not JSON"):
        spec_from_config("{", "x/config.json")
    with pytest.raises(InputError, match="no usable 'hidden_size'"):
        spec_from_config('{"model_type": "bert"}', "x/config.json")


def test_cheapest_fit_is_the_lowest_rate_that_holds_it() -> None:
    est = estimate(spec_from_name("qwen2.5-14b"), "bf16", 4096, 1, "none")  # 27.5 + 0.75 + 5.5: ~34 GiB
    cards = [
        Card("RTX 4090", 24564, "a", 1.98),
        Card("A100-SXM4-80GB", 81920, "b", 6.5),
        Card("L40S", 46068, "c", 4.2),
        Card("", 0, "d", 0.5),
    ]
    fits = fit_cards(est, cards)
    assert [f.fits for f in fits] == [False, True, True, None]
    best = cheapest_fit(fits)
    assert best is not None and best.card.instance == "c"
    # an instance with no rate set (0) is not "the cheapest"; it is named only when nothing priced fits
    unpriced = fit_cards(est, [*cards, Card("A100-SXM4-80GB", 81920, "lab", 0.0)])
    assert [f.card.instance for f in [cheapest_fit(unpriced)] if f is not None] == ["c"]
    only = fit_cards(est, [Card("RTX 4090", 24564, "a", 1.98), Card("A100-SXM4-80GB", 81920, "lab", 0.0)])
    assert [f.card.instance for f in [cheapest_fit(only)] if f is not None] == ["lab"]
    doc = estimate_json(est, fits)
    assert doc["fits"][3] == {"instance": "d", "gpu": None, "memory_gib": None, "fits": None}
    assert doc["optimizer_gib"] is None and doc["total_gib"] == round(est.total_gib, 2)


# ----- the command, as a user runs it
def _run(tmp_path: Path, *words: str) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "config.toml"
    if not cfg.exists():
        cfg.write_text('[[instances]]\nname = "autodl-4090"\nhost = "example.com"\nhourly_rate = 1.98\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XDG_", "GPU_TUI_"))}
    env.update(HOME=str(tmp_path), GPU_TUI_LANG="en")
    return subprocess.run(
        [sys.executable, "-m", "gpu_tui", "--config", str(cfg), "fit", *words],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_cli_json_shape(tmp_path: Path) -> None:
    res = _run(tmp_path, "qwen2.5-7b", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert list(doc) == [
        "model",
        "params_billion",
        "dtype",
        "context",
        "batch",
        "train",
        "weights_gib",
        "kv_cache_gib",
        "activations_gib",
        "optimizer_gib",
        "total_gib",
        "fits",
    ]
    assert doc["params_billion"] == 7.616 and doc["kv_cache_gib"] == 0.22 and doc["optimizer_gib"] is None
    assert doc["fits"][0] == {"instance": "autodl-4090", "gpu": None, "memory_gib": None, "fits": None}
    assert [f["memory_gib"] for f in doc["fits"][1:]] == [23.99, 31.84, 40.0, 44.99, 79.65, 140.4]


def test_cli_text_and_config_path(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text(QWEN25_7B_CONFIG)
    res = _run(tmp_path, str(tmp_path / "model"), "--train", "lora", "--context", "1024")
    assert res.returncode == 0, res.stderr
    assert "7.62B parameters, bf16, 1024 tokens x batch 1, LoRA fine-tuning" in res.stdout
    assert "autodl-4090" in res.stdout and "GPUs not known yet: `gpu-tui fit --probe` asks" in res.stdout
    assert "24 GB (RTX 4090 / 3090)   fits" in res.stdout


@pytest.mark.parametrize(
    ("words", "says"),
    [
        (("qwen2.5-7bb",), "unknown model 'qwen2.5-7bb' (did you mean qwen2.5-7b"),
        (("7b", "--dtype", "int3"), "--dtype must be one of fp32, bf16, fp16, int8, int4"),
        (("7b", "--context", "lots"), "--context wants a whole number"),
        (("7b", "--train", "qlora"), "--train must be none, lora or full"),
        (("missing/config.json",), "cannot read missing/config.json (No such file or directory)"),
        (("9000b",), "more than 5000b parameters"),
        ((), "fit needs MODEL"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(tmp_path: Path, words: tuple[str, ...], says: str) -> None:
    res = _run(tmp_path, *words)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and says in res.stderr, res.stderr


def test_cli_unreadable_config_json(tmp_path: Path) -> None:
    bad = tmp_path / "config.json"
    bad.write_text("not json")
    res = _run(tmp_path, str(bad))
    assert res.returncode == 2 and "is not JSON" in res.stderr and res.stderr.count("\n") == 1


def test_cli_list_names_every_model_with_its_size(tmp_path: Path) -> None:
    res = _run(tmp_path, "--list")
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == len(MODELS)
    assert lines[3].split() == ["qwen2.5-7b", "7.62B", "Qwen/Qwen2.5-7B-Instruct"]


def test_gpu_cache_merges_and_survives_a_broken_file(tmp_path: Path) -> None:
    from gpu_tui.services.gpucache import SeenGpus, cache_file, load_gpus, save_gpus

    path = cache_file(tmp_path / "data")
    assert load_gpus(path) == {}  # no file yet
    a, b = SeenGpus("RTX 4090", 24564, 1, 100.0), SeenGpus("H100 80GB HBM3", 81559, 8, 200.0)
    assert save_gpus(path, {"a": a})
    assert save_gpus(path, {"b": b})  # a keeps its sighting
    assert load_gpus(path) == {"a": a, "b": b}
    path.write_text(
        '{"instances": {"a": {"gpu": "x"}, "b": {"gpu": "L40S", "memory_mib": 46068, "count": 8, "seen_at": 1}}}'
    )
    assert load_gpus(path) == {"b": SeenGpus("L40S", 46068, 8, 1.0)}  # the broken entry is dropped, not fatal
    path.write_text("not json")
    assert load_gpus(path) == {}


def test_qwen2_moe_counts_its_shared_expert() -> None:
    """Qwen2-MoE's config.json fields (Qwen/Qwen2-57B-A14B and Qwen/Qwen1.5-MoE-A2.7B on the Hub):
    a shared expert `shared_expert_intermediate_size` wide beside the routed ones, with a one-unit
    gate; q/k/v biased. The model cards say 57.41B and 14.3B parameters."""
    import json

    q57 = {
        "model_type": "qwen2_moe",
        "hidden_size": 3584,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "intermediate_size": 18944,
        "moe_intermediate_size": 2560,
        "shared_expert_intermediate_size": 20480,
        "num_experts": 64,
        "vocab_size": 151936,
        "tie_word_embeddings": False,
    }
    q15 = {
        "model_type": "qwen2_moe",
        "hidden_size": 2048,
        "num_hidden_layers": 24,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "intermediate_size": 5632,
        "moe_intermediate_size": 1408,
        "shared_expert_intermediate_size": 5632,
        "num_experts": 60,
        "vocab_size": 151936,
        "tie_word_embeddings": False,
    }
    # per MoE layer, 57B: 64 x 3 x 3584 x 2560 (routed) + 3 x 3584 x 20480 (shared) + 3584 x 64 (router)
    # + 3584 (shared gate); the shared expert alone is 28 x 220.2M = 6.17B of the 57.41B
    assert count_params(spec_from_config(json.dumps(q57), "q57").shape) / 1e9 == pytest.approx(57.41, rel=0.002)
    assert count_params(spec_from_config(json.dumps(q15), "q15").shape) / 1e9 == pytest.approx(14.32, rel=0.003)
