"""The forward pass's trace: pinned ordered hook names, the §6 shape table for any T, batching, read-only arrays."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.explain.transformer import (
    PRIMER_CONFIG,
    Intervention,
    forward,
    hand_model,
    logit_lens,
    parameter_shapes,
    random_model,
)
from core.explain.weights import trained_model
from core.explain.world import corpus

LAYER = [
    "hook_resid_pre",
    "ln1.hook_normalized",
    "attn.hook_q",
    "attn.hook_k",
    "attn.hook_v",
    "attn.hook_attn_scores_raw",
    "attn.hook_attn_scores",
    "attn.hook_attn_scores_masked",
    "attn.hook_pattern",
    "attn.hook_z",
    "attn.hook_concat",
    "hook_attn_out",
    "hook_resid_mid",
    "ln2.hook_normalized",
    "mlp.hook_pre",
    "mlp.hook_post",
    "hook_mlp_out",
    "hook_resid_post",
]
NAMES = [
    "hook_embed",
    "hook_pos_embed",
    *[f"blocks.{layer}.{name}" for layer in range(2) for name in LAYER],
    "ln_final.hook_normalized",
    "hook_logits",
    "hook_probs",
]


def shape_table(T: int) -> dict[str, tuple[int, ...]]:
    """The primer's §6 shape table (per head where it says so), in TransformerLens layouts."""
    d, h, dk, dff, V = 6, 2, 3, 8, 20
    shapes = {"hook_embed": (T, d), "hook_pos_embed": (T, d), "ln_final.hook_normalized": (T, d)}
    shapes |= {"hook_logits": (T, V), "hook_probs": (T, V)}
    for layer in range(2):
        p = f"blocks.{layer}."
        for name in ("hook_resid_pre", "ln1.hook_normalized", "hook_attn_out", "hook_resid_mid"):
            shapes[p + name] = (T, d)
        for name in ("ln2.hook_normalized", "hook_mlp_out", "hook_resid_post", "attn.hook_concat"):
            shapes[p + name] = (T, d)
        for name in ("q", "k", "v", "z"):
            shapes[p + f"attn.hook_{name}"] = (T, h, dk)  # T × d_k per head, ×2
        for name in ("attn_scores_raw", "attn_scores", "attn_scores_masked", "pattern"):
            shapes[p + f"attn.hook_{name}"] = (h, T, T)  # T × T per head
        shapes[p + "mlp.hook_pre"] = shapes[p + "mlp.hook_post"] = (T, dff)
    return shapes


@pytest.fixture(scope="module")
def model():
    return trained_model()


def test_ordered_hook_names(model):
    assert list(forward(model, [1, 4, 5, 9])) == NAMES


def test_deleted_attention_drops_only_the_attention_hooks(model):
    names = list(forward(model, [1, 4, 5, 11], intervention=Intervention(attention="deleted")))
    assert names == [n for n in NAMES if ".attn." not in n and "ln1" not in n and "hook_attn_out" not in n]


def test_parameter_count_is_counted_not_typed(model):
    shapes = parameter_shapes(PRIMER_CONFIG)
    assert model.n_params == sum(int(np.prod(s)) for s in shapes.values()) == 736
    assert shapes["blocks.0.attn.W_O"] == (6, 6) and shapes["blocks.1.mlp.W_1"] == (6, 8)


@settings(max_examples=25, deadline=None)
@given(T=st.integers(min_value=1, max_value=16), seed=st.integers(min_value=0, max_value=10_000))
def test_shapes_match_the_primer_table_for_any_T(T, seed):
    model = random_model(PRIMER_CONFIG, seed=seed)
    ids = np.random.default_rng(seed).integers(0, 20, size=T)
    trace = forward(model, ids)
    assert {name: value.shape for name, value in trace.items()} == shape_table(T)
    batched = forward(model, np.stack([ids, ids[::-1]]))
    assert {name: value.shape for name, value in batched.items()} == {
        name: shape if name == "hook_pos_embed" else (2, *shape) for name, shape in shape_table(T).items()
    }


@settings(max_examples=25, deadline=None)
@given(T=st.integers(min_value=1, max_value=12), seed=st.integers(min_value=0, max_value=10_000))
def test_probabilities_rows_sum_to_one_and_attention_is_causal(T, seed):
    trace = forward(random_model(PRIMER_CONFIG, seed=seed), np.random.default_rng(seed).integers(0, 20, size=T))
    np.testing.assert_allclose(trace["hook_probs"].sum(axis=-1), 1.0, atol=1e-12)
    for layer in range(2):
        pattern = trace[f"blocks.{layer}.attn.hook_pattern"]
        np.testing.assert_allclose(pattern.sum(axis=-1), 1.0, atol=1e-12)
        assert (pattern[:, np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0).all()


def test_residual_stream_bookkeeping(model):
    trace = forward(model, [1, 4, 5, 9])
    assert np.array_equal(trace["blocks.0.hook_resid_pre"], trace["hook_embed"] + trace["hook_pos_embed"])
    for layer in range(2):
        p = f"blocks.{layer}."
        assert np.array_equal(trace[p + "hook_resid_mid"], trace[p + "hook_resid_pre"] + trace[p + "hook_attn_out"])
        assert np.array_equal(trace[p + "hook_resid_post"], trace[p + "hook_resid_mid"] + trace[p + "hook_mlp_out"])
    assert np.array_equal(trace["blocks.1.hook_resid_pre"], trace["blocks.0.hook_resid_post"])
    z = trace["blocks.0.attn.hook_z"]
    assert np.array_equal(trace["blocks.0.attn.hook_concat"], z.reshape(4, 6))


def test_padded_batch_equals_one_sentence_at_a_time(model):
    data = corpus()
    batched = forward(model, data.ids, lengths=data.lengths)
    for row in range(0, 64, 7):
        n = int(data.lengths[row])
        single = forward(model, data.ids[row, :n])
        for name in ("hook_logits", "blocks.1.hook_resid_mid", "blocks.0.attn.hook_z"):
            np.testing.assert_allclose(batched[name][row, :n], single[name], rtol=0, atol=1e-13)
        np.testing.assert_allclose(
            batched["blocks.1.attn.hook_pattern"][row, :, :n, :n], single["blocks.1.attn.hook_pattern"], atol=1e-15
        )


def test_padded_keys_get_no_attention(model):
    data = corpus()
    trace = forward(model, data.ids, lengths=data.lengths)
    pad = np.arange(data.ids.shape[1])[None, :] >= data.lengths[:, None]
    for layer in range(2):
        pattern = trace[f"blocks.{layer}.attn.hook_pattern"]  # batch, head, query, key
        real_queries = ~pad[:, None, :, None]
        assert (pattern[np.broadcast_to(real_queries & pad[:, None, None, :], pattern.shape)] == 0).all()


def test_trace_and_weights_are_read_only(model):
    trace = forward(model, [1, 4, 5, 9])
    for name, value in trace.items():
        with pytest.raises(ValueError):
            value[...] = 0.0
        assert not value.flags.writeable, name
    with pytest.raises(ValueError):
        model.params["E"][0, 0] = 1.0
    with pytest.raises(TypeError):
        model.params["E"] = None


def test_logit_lens_ends_at_the_models_logits(model):
    trace = forward(model, [1, 4, 5, 11])
    lens = logit_lens(model, trace)
    assert list(lens) == [
        "blocks.0.hook_resid_pre",
        "blocks.0.hook_resid_mid",
        "blocks.0.hook_resid_post",
        "blocks.1.hook_resid_mid",
        "blocks.1.hook_resid_post",
    ]
    assert np.array_equal(lens["blocks.1.hook_resid_post"], trace["hook_logits"])
    assert all(value.shape == (4, 20) for value in lens.values())
    assert not np.allclose(lens["blocks.0.hook_resid_pre"], trace["hook_logits"])
    hand = hand_model()
    with pytest.raises(ValueError, match="logit lens"):
        logit_lens(hand, forward(hand, hand.token_ids))
