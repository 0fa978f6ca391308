"""core/explain/trace_views.py: the §6 shape table matches the trace for any prompt length, the read-outs the page
shows equal the engine's, prompts are parsed as the page promises, and the primer's §6 asset is transcribed
consistently."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.explain.attention import softmax
from core.explain.trace_views import (
    COPULA_PROBES,
    MAX_TOKENS,
    PromptError,
    all_heads,
    column_travel,
    copula_probe,
    copula_table,
    head_blocks,
    lens_probabilities,
    pair_frequencies,
    parse_prompt,
    primer_section6,
    query_attention,
    rule_emergence,
    shape_table,
    stage_norms,
    stage_projection,
    top_k,
)
from core.explain.transformer import PRIMER_CONFIG, forward, layer_norm, sinusoidal_positions
from core.explain.weights import trained_model

MODEL = trained_model()
VOCAB = MODEL.vocabulary
C = PRIMER_CONFIG

# The primer's §6 shape table, as printed for T = 4 (one block per head for the per-head rows).
PRINTED_T4 = {
    "ids": "[4]",
    "h0": "4 × 6",
    "ln1": "4 × 6",
    "qkv": "4 × 6",
    "heads": "4 × 3 each, ×2",
    "scores": "4 × 4 each, ×2",
    "weights": "4 × 4 each, ×2",
    "z": "4 × 3 each, ×2",
    "concat": "4 × 6",
    "attn_out": "4 × 6",
    "resid_mid": "4 × 6",
    "ln2": "4 × 6",
    "mlp_pre": "4 × 8",
    "mlp_post": "4 × 8",
    "mlp_out": "4 × 6",
    "resid_post": "4 × 6",
    "final": "4 × 6",
    "final_ln": "4 × 6",
    "logits": "[20]",
    "probs": "[20]",
}


def test_shape_table_for_the_primer_prompt_reads_as_printed():
    table = shape_table(C, 4)
    assert [row.key for row in table] == list(PRINTED_T4)
    assert {row.key: row.live for row in table} == PRINTED_T4


def _expected_block_shape(key: str, T: int) -> tuple[int, ...]:
    """The shape of one displayed block per the primer's symbolic table (T × d_model, T × T per head, …)."""
    d, dk, ff, V = C.d_model, C.d_head, C.d_ff, C.vocab_size
    return {
        "ids": (T,),
        "qkv": (T, C.n_heads * dk),
        "heads": (T, dk),
        "scores": (T, T),
        "weights": (T, T),
        "z": (T, dk),
        "concat": (T, C.n_heads * dk),
        "mlp_pre": (T, ff),
        "mlp_post": (T, ff),
        "logits": (V,),
        "probs": (V,),
    }.get(key, (T, d))


@settings(max_examples=25, deadline=None)
@given(
    words=st.lists(st.sampled_from(VOCAB), min_size=0, max_size=MAX_TOKENS - 1),
    layer=st.integers(0, C.n_layers - 1),
)
def test_trace_shapes_match_the_shape_table_for_any_T(words, layer):
    tokens = ("<BOS>", *words)
    T = len(tokens)
    trace = forward(MODEL, MODEL.encode(tokens))
    for row in shape_table(C, T, layer):
        expected = _expected_block_shape(row.key, T)
        assert row.shape == expected, row.key
        if row.key == "ids":
            assert len(MODEL.encode(tokens)) == T
        elif row.key == "qkv":
            assert all(all_heads(trace, layer, name).shape == expected for name in "qkv")
        elif row.key == "heads":
            blocks = [head_blocks(trace, layer, name) for name in "qkv"]
            assert all(len(b) == C.n_heads and all(x.shape == expected for x in b) for b in blocks)
        elif row.key in ("scores", "weights"):
            assert trace[row.hook].shape == (C.n_heads, *expected)
        elif row.key == "z":
            assert trace[row.hook].shape == (T, C.n_heads, C.d_head)
            assert all(block.shape == expected for block in head_blocks(trace, layer, "z"))
        elif row.key in ("logits", "probs"):
            assert trace[row.hook].shape == (T, *expected)  # every position; the read-out uses the last row
        else:
            assert trace[row.hook].shape == expected, row.key
        assert (row.heads > 1) == (row.key in ("heads", "scores", "weights", "z"))


def test_every_layer_row_points_at_its_own_layer():
    for layer in range(C.n_layers):
        for row in shape_table(C, 4, layer):
            if row.layered and row.hook:
                assert row.hook.startswith(f"blocks.{layer}."), row.hook
            elif row.hook and row.key != "h0":
                assert not row.hook.startswith(f"blocks.{layer}.") or row.key == "final"


def test_step_names_do_not_depend_on_T_or_layer():
    names = [row.step for row in shape_table(C, 4, 0)]
    assert names == [row.step for row in shape_table(C, 11, 1)]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("prompt", ["<BOS> the cat sat", "<BOS> the mat is", "<BOS> the big dog ran"])
def test_displayed_top5_equals_the_engines_distribution(prompt):
    trace = forward(MODEL, MODEL.encode(prompt.split()))
    probs = trace["hook_probs"][-1]
    table = top_k(trace["hook_logits"][-1], VOCAB, 5)
    order = np.argsort(-probs)[:5]
    assert [r.token for r in table] == [VOCAB[i] for i in order]
    assert [r.probability for r in table] == pytest.approx(probs[order], abs=1e-15)
    assert [r.logit for r in table] == list(trace["hook_logits"][-1][order])
    assert [r.rank for r in table] == [1, 2, 3, 4, 5]


def test_top5_at_a_temperature_is_the_tempered_softmax():
    logits = forward(MODEL, MODEL.encode(["<BOS>", "the", "cat", "is"]))["hook_logits"][-1]
    for tau in (0.3, 1.0, 2.5):
        table = top_k(logits, VOCAB, 5, tau)
        expected = np.exp(logits / tau) / np.exp(logits / tau).sum()
        assert [r.probability for r in table] == pytest.approx(np.sort(expected)[::-1][:5], rel=1e-12)
    flat, sharp = top_k(logits, VOCAB, 1, 3.0)[0], top_k(logits, VOCAB, 1, 0.3)[0]
    assert sharp.probability > flat.probability


def test_parse_prompt_accepts_the_vocabulary_and_adds_bos():
    assert parse_prompt("<BOS> the cat sat", VOCAB) == ("<BOS>", "the", "cat", "sat")
    assert parse_prompt("  The CAT   is ", VOCAB) == ("<BOS>", "the", "cat", "is")
    assert parse_prompt("<bos> the", VOCAB) == ("<BOS>", "the")


@pytest.mark.parametrize("text", ["", "   "])
def test_parse_prompt_refuses_an_empty_prompt(text):
    with pytest.raises(PromptError, match="empty"):
        parse_prompt(text, VOCAB)


def test_parse_prompt_names_the_unknown_word_and_the_vocabulary():
    with pytest.raises(PromptError) as error:
        parse_prompt("<BOS> the zebra is", VOCAB)
    message = str(error.value)
    assert "'zebra'" in message and " ".join(VOCAB) in message


def test_parse_prompt_bounds_the_length():
    parse_prompt(" ".join(["the"] * (MAX_TOKENS - 1)), VOCAB)  # with <BOS>: exactly the bound
    with pytest.raises(PromptError, match=f"at most {MAX_TOKENS}"):
        parse_prompt(" ".join(["the"] * MAX_TOKENS), VOCAB)


def test_positional_pairs_turn_at_the_primers_frequencies():
    """Primer §6 Step 1: the three pairs turn at 1, 10000^(-1/3) and 10000^(-2/3) per position."""
    freq = pair_frequencies(6)
    assert freq == pytest.approx([1.0, 10000 ** (-1 / 3), 10000 ** (-2 / 3)], rel=1e-12)
    travel = column_travel(sinusoidal_positions(4, 6))
    assert travel[0] == pytest.approx(0.909, abs=5e-4)  # the sine column goes 0.000, 0.841, 0.909, 0.141
    assert travel[4] == pytest.approx(0.006, abs=5e-4)  # column 5 reaches 0.006 at position 4


def test_logit_lens_last_stage_is_the_models_output_and_first_is_h0():
    trace = forward(MODEL, MODEL.encode(["<BOS>", "the", "cat", "is"]))
    labels, lens = lens_probabilities(MODEL, trace)
    assert len(labels) == 1 + 2 * C.n_layers == lens.shape[0]
    assert lens[-1] == pytest.approx(trace["hook_probs"][-1], abs=1e-15)
    p = MODEL.params
    h0 = trace["blocks.0.hook_resid_pre"][-1]
    by_hand = softmax(layer_norm(h0, p["ln_final.gamma"], p["ln_final.beta"]) @ p["E"].T)
    assert lens[0] == pytest.approx(by_hand, abs=1e-12)


def test_residual_stage_norms_and_projection():
    trace = forward(MODEL, MODEL.encode(["<BOS>", "the", "cat", "sat"]))
    norms = stage_norms(trace, C.n_layers)
    assert norms.shape == (5, 4)
    assert norms[0] == pytest.approx(np.linalg.norm(trace["blocks.0.hook_resid_pre"], axis=1))
    assert norms[-1] == pytest.approx(np.linalg.norm(trace["blocks.1.hook_resid_post"], axis=1))
    coords, share = stage_projection(trace, C.n_layers)
    assert coords.shape == (5, 4, 2)
    assert 0 < share[1] <= share[0] and share.sum() <= 1 + 1e-12


def test_query_attention_rows_are_the_last_query_of_each_head():
    trace = forward(MODEL, MODEL.encode(["<BOS>", "the", "cat", "is"]))
    rows = query_attention(trace, C.n_layers)
    assert rows.shape == (4, 4)
    assert rows[3] == pytest.approx(trace["blocks.1.attn.hook_pattern"][1, -1])
    assert rows.sum(axis=1) == pytest.approx(np.ones(4))


def test_copula_probe_and_table_agree_and_cover_the_world():
    table = copula_table(MODEL)
    assert len(table) == 16 and sum(r.held_out for r in table) == 5
    for prompt in COPULA_PROBES:
        probe = copula_probe(MODEL, prompt)
        sentence_rows = [r for r in table if r.sentence.startswith(" ".join(prompt[1:]) + " ")]
        assert len(sentence_rows) == 2
        for row in sentence_rows:  # the batched corpus pass and the single prompt give the same read-out
            assert row.class_mass == pytest.approx(probe.class_mass, abs=1e-12)
            assert row.top == probe.top[0].token
        assert probe.class_mass == pytest.approx(sum(probe.probs[VOCAB.index(a)] for a in probe.adjectives))


def test_rule_emergence_first_reach_and_for_good():
    steps = [0, 50, 100, 150, 200]
    assert rule_emergence(steps, [0.0, 1.0, 0.4, 1.0, 1.0]) == (50, 150)
    assert rule_emergence(steps, [0.0, 0.2, 0.4, 0.6, 0.8]) == (None, None)
    assert rule_emergence(steps, [1.0, 1.0, 1.0, 1.0, 1.0]) == (0, 0)
    assert rule_emergence(steps, [0.0, 1.0, 1.0, 1.0, 0.8]) == (50, None)


def test_primer_asset_is_self_consistent():
    """The transcribed §6 figures recompute each other: softmax(logits) = probs, the top-5 table, the final LN."""
    primer = primer_section6()
    assert primer.vocabulary == VOCAB
    readout = primer.readout
    logits, probs = np.array(readout["logits"]), np.array(readout["probs"])
    assert softmax(logits) == pytest.approx(probs, abs=6e-4)
    printed_top = [(r["token"], r["logit"], r["probability"]) for r in readout["top5"]]
    ours_top = top_k(logits, VOCAB, 5)
    assert [t for t, _, _ in printed_top] == [r.token for r in ours_top]
    assert [lo for _, lo, _ in printed_top] == pytest.approx([r.logit for r in ours_top], abs=6e-3)
    assert readout["p_on"] == probs[VOCAB.index("on")] == readout["top5"][0]["probability"]
    ln = primer.final_layernorm
    h = np.array(ln["h2_last"])
    assert h.mean() == pytest.approx(ln["mean_before"], abs=6e-4) and h.std() == pytest.approx(
        ln["std_before"], abs=2e-3
    )
    assert layer_norm(h, np.array(ln["gamma"]), np.array(ln["beta"])) == pytest.approx(ln["normalized_last"], abs=0.004)
    assert primer.query_attention.sum(axis=1) == pytest.approx(np.ones(4), abs=2e-3)
    for row in primer.layer1_patterns["heads"]:
        assert np.array(row["weights"]).sum(axis=1) == pytest.approx(np.ones(4), abs=2e-3)
