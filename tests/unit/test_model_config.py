"""Reading Hugging Face config.json files: real shapes parse to the right counts, every bad file names its field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.plan.kv_cache import kv_bytes_per_token
from core.plan.model_config import (
    FIELD_NAMES,
    MAX_CONFIG_BYTES,
    config_from_fields,
    param_count,
    parse_config_dict,
    parse_config_text,
    preset_sources,
    presets,
    weight_inventory,
)

BAD = Path(__file__).resolve().parents[1] / "data" / "bad_configs"
EXPECTED = json.loads((BAD / "expected.json").read_text(encoding="utf-8"))["messages"]

GPT2_CONFIG = {  # openai-community/gpt2 config.json (the fields that matter)
    "model_type": "gpt2",
    "n_layer": 12,
    "n_embd": 768,
    "n_head": 12,
    "n_positions": 1024,
    "n_inner": None,
    "vocab_size": 50257,
    "activation_function": "gelu_new",
}
QWEN25_7B = {  # Qwen/Qwen2.5-7B-Instruct config.json
    "architectures": ["Qwen2ForCausalLM"],
    "model_type": "qwen2",
    "hidden_size": 3584,
    "intermediate_size": 18944,
    "num_attention_heads": 28,
    "num_hidden_layers": 28,
    "num_key_value_heads": 4,
    "vocab_size": 152064,
    "sliding_window": 131072,
    "use_sliding_window": False,
    "tie_word_embeddings": False,
    "max_window_layers": 28,
}


def test_gpt2_config_parses_to_its_exact_count():
    report = parse_config_dict(GPT2_CONFIG)
    assert report.errors == ()
    assert param_count(report.config) == 124_439_808
    assert {"n_layer", "n_embd", "n_head", "n_positions", "vocab_size"} <= set(report.used)
    assert any("intermediate_size" in text for text in report.assumed)  # n_inner null -> 4 x n_embd, said so
    assert any("tie_word_embeddings" in text and "tied" in text for text in report.assumed)


def test_qwen_config_counts_qkv_biases_and_ignores_a_disabled_window():
    report = parse_config_dict(QWEN25_7B)
    assert report.config is not None
    assert report.config.bias == "qkv" and report.config.sliding_window == 0
    assert any("use_sliding_window is false" in text for text in report.assumed)
    assert param_count(report.config) == pytest.approx(7.61e9, rel=0.001)
    assert kv_bytes_per_token(report.config) == 2 * 28 * 4 * 128 * 2


def test_multimodal_text_config_is_read():
    wrapped = {
        "model_type": "llava",
        "vision_config": {"hidden_size": 1024},
        "text_config": {
            "model_type": "llama",
            "num_hidden_layers": 32,
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "vocab_size": 128256,
            "intermediate_size": 14336,
            "tie_word_embeddings": False,
        },
    }
    report = parse_config_dict(wrapped)
    assert report.config is not None and report.config.n_kv_heads == 8
    assert any("text_config" in name for name in report.used)
    assert param_count(report.config) == param_count(presets()["llama-3.1-8b"])


def test_missing_optional_fields_are_assumed_and_said():
    report = parse_config_dict({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4})
    assert report.config is not None
    said = " ".join(report.assumed)
    for field in ("num_key_value_heads", "head_dim", "vocab_size", "intermediate_size", "tie_word_embeddings"):
        assert field in said
    assert report.config.n_kv_heads == 4 and report.config.head_dim == 16


def test_gemma2_layer_mix_and_explicit_layer_types():
    base = {
        "model_type": "gemma2",
        "num_hidden_layers": 42,
        "hidden_size": 3584,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 256,
        "sliding_window": 4096,
    }
    assert parse_config_dict(base).config.sliding_layers == 21
    typed = {**base, "layer_types": ["sliding_attention"] * 5 + ["full_attention"] * 37}
    report = parse_config_dict(typed)
    assert report.config.sliding_layers == 5 and "layer_types" in report.used


def test_mistral_window_applies_to_every_layer():
    config = parse_config_dict(
        {
            "num_hidden_layers": 32,
            "hidden_size": 4096,
            "num_attention_heads": 32,
            "num_key_value_heads": 8,
            "sliding_window": 4096,
        }
    ).config
    assert config.sliding_layers == 32 and config.sliding_window == 4096


def test_deepseek_style_latent_and_experts():
    entry = presets()["deepseek-v3"]
    assert entry.is_mla and entry.is_moe and entry.dense_layers == 3 and entry.attention_kind == "MLA"
    names = [row.weight for row in weight_inventory(entry)]
    assert "W_KV down (latent + rope key)" in names and "256 routed experts" in names


def test_multi_query_flag_means_one_kv_head():
    config = parse_config_dict(
        {"model_type": "gpt_bigcode", "n_layer": 4, "n_embd": 256, "n_head": 8, "multi_query": True}
    ).config
    assert config.n_kv_heads == 1 and config.attention_kind == "MQA"


def test_tied_embedding_is_listed_but_not_counted_twice():
    rows = {row.weight: row for row in weight_inventory(presets()["gpt2"])}
    assert rows["Unembedding U = Eᵀ (tied, shared)"].total == 0
    assert rows["Token embedding E"].total == 50257 * 768


MAX_CONTEXT = {  # max_position_embeddings of each model's config.json (n_positions for GPT-2), typed from the sources
    "primer-7b": 131_072,  # primer §4: T up to 128K for a modern 7B
    "gpt2": 1024,
    "llama-2-7b": 4096,
    "llama-3.1-8b": 131_072,
    "llama-3.1-70b": 131_072,
    "llama-3.1-405b": 131_072,
    "mistral-7b": 32_768,
    "mixtral-8x7b": 32_768,
    "qwen2.5-7b": 32_768,
    "qwen2.5-72b": 32_768,
    "gemma-2-9b": 8192,
    "gemma-2-27b": 8192,
    "phi-3-mini": 131_072,
    "deepseek-v3": 163_840,
}


def test_every_preset_states_its_maximum_context_and_its_source():
    assert {key: config.max_context for key, config in presets().items()} == MAX_CONTEXT
    assert all("max_context" in preset_sources(key) for key in presets())


def test_maximum_context_is_read_from_the_config_or_said_to_be_unknown():
    assert parse_config_dict(GPT2_CONFIG).config.max_context == 1024  # n_positions
    qwen = parse_config_dict({**QWEN25_7B, "max_position_embeddings": 32768}).config
    assert qwen.max_context == 32768 and not qwen.exceeds_context(32768) and qwen.exceeds_context(32769)
    unknown = parse_config_dict(QWEN25_7B)
    assert unknown.config.max_context == 0 and not unknown.config.exceeds_context(10**7)
    assert any("max_position_embeddings missing" in text for text in unknown.assumed)
    bad = parse_config_dict({**QWEN25_7B, "max_position_embeddings": -1})
    assert bad.config is None and "max_position_embeddings = -1 must be positive" in bad.errors[0]


# ------------------------------------------------------------------------------------------------ the bad corpus
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_bad_config_gives_its_message_and_never_raises(name):
    report = parse_config_text((BAD / name).read_bytes(), name=name)
    assert report.config is None
    assert any(EXPECTED[name] in message for message in report.errors), report.errors


def test_corpus_and_manifest_agree():
    files = {path.name for path in BAD.glob("*.json")} - {"expected.json"}
    assert files == set(EXPECTED)


def test_oversized_file_is_refused_with_its_size():
    huge = b'{"num_hidden_layers": 32, "padding": "' + b"x" * MAX_CONFIG_BYTES + b'"}'
    report = parse_config_text(huge)
    assert report.config is None and "limit" in report.errors[0] and f"{len(huge):,}" in report.errors[0]


def test_deeply_nested_json_is_refused_not_raised():
    report = parse_config_text("[" * 100_000 + "]" * 100_000)
    assert report.config is None and report.errors


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats() | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
field_names = st.sampled_from(
    [
        "num_hidden_layers",
        "hidden_size",
        "num_attention_heads",
        "num_key_value_heads",
        "head_dim",
        "vocab_size",
        "intermediate_size",
        "kv_lora_rank",
        "qk_rope_head_dim",
        "num_local_experts",
        "num_experts_per_tok",
        "sliding_window",
        "tie_word_embeddings",
        "text_config",
        "layer_types",
        "model_type",
        "use_sliding_window",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(field_names, json_values | st.integers(-5, 5000), max_size=12))
def test_random_configs_never_raise(raw):
    report = parse_config_dict(raw)
    assert (report.config is None) == bool(report.errors)
    if report.config is not None:
        assert param_count(report.config) > 0 and kv_bytes_per_token(report.config) > 0


# ------------------------------------------------------------------------------------------------ manual fields
def test_manual_fields_round_trip_a_preset():
    for preset in presets().values():
        config, errors = config_from_fields(preset.to_fields(), name=preset.name)
        assert errors == [] and param_count(config) == param_count(preset)


def test_manual_fields_name_the_inconsistent_field():
    values = presets()["llama-3.1-8b"].to_fields() | {"n_kv_heads": 5}
    config, errors = config_from_fields(values)
    assert config is None and "num_key_value_heads (5)" in errors[0]
    assert set(FIELD_NAMES) == set(presets()["gpt2"].to_fields())
