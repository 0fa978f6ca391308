"""Structure of the Appendix A analyses and the exact identities behind ablation and patching (no typed-in results)."""

import numpy as np
import pytest

from core.explain.analysis import (
    ATTENTION_OFF,
    ablation_sweep,
    copula_attention,
    family_sweep,
    head_means,
    head_subsets,
    heads,
    lens_scores,
    mean_ablation,
    neuron_ablation,
    neuron_means,
    neuron_sweep,
    next_token_table,
    patch_heads,
    score_slots,
)
from core.explain.transformer import PRIMER_CONFIG, Intervention, Model, forward
from core.explain.weights import family, trained_model
from core.explain.world import corpus

HEADS = heads(PRIMER_CONFIG)


@pytest.fixture(scope="module")
def model():
    return trained_model()


@pytest.fixture(scope="module")
def sweep(model):
    return ablation_sweep(model)


def corpus_logits(model, intervention=Intervention()):  # noqa: B008 (a frozen dataclass, never mutated)
    data = corpus()
    return forward(model, data.ids, lengths=data.lengths, intervention=intervention)["hook_logits"]


def is_multiple_of(values, step):
    counts = np.asarray(values) / step
    return bool(np.allclose(counts, np.round(counts), rtol=0, atol=1e-9))


def with_params(model, **changes):
    return Model(config=model.config, params=dict(model.params) | changes, vocabulary=model.vocabulary)


def test_sixteen_head_subsets():
    subsets = head_subsets(PRIMER_CONFIG)
    assert len(subsets) == 16 == len(set(subsets))
    assert subsets[0] == frozenset() and subsets[-1] == frozenset(HEADS)
    assert all(s <= frozenset(HEADS) for s in subsets)


def test_sweep_structure(sweep):
    assert len(sweep.removed) == 17
    assert sweep.removed[:16] == head_subsets(PRIMER_CONFIG) and sweep.removed[16] is None
    assert sweep.labels[0] == "none" and sweep.labels[-1] == ATTENTION_OFF
    assert len(set(sweep.labels)) == 17
    assert (sweep.n_bigram_slots, sweep.n_copula_slots, sweep.n_held_out_copula_slots) == (432, 16, 5)
    for name in ("rule_accuracy", "bigram_top1", "copula_class_accuracy", "copula_class_mass", "attention_on_subject"):
        values = getattr(sweep, name)
        assert values.shape[0] == 17
        assert ((values >= 0) & (values <= 1)).all(), name
    assert sweep.attention_on_subject.shape == (17, 2, 2)
    assert is_multiple_of(sweep.rule_accuracy, 1 / 5)  # moves in fifths
    assert is_multiple_of(sweep.bigram_top1, 1 / 432)
    assert is_multiple_of(sweep.copula_class_accuracy, 1 / 16)
    rows = sweep.rows()
    assert len(rows) == 17 and rows[0]["heads removed"] == "none"


def test_each_sweep_row_is_the_engines_own_ablation(model, sweep):
    data = corpus()
    for i, removed in enumerate(sweep.removed):
        intervention = Intervention(attention="off") if removed is None else Intervention(zero_heads=removed)
        scores = score_slots(model, intervention=intervention)
        assert scores.rule_accuracy == sweep.rule_accuracy[i]
        assert scores.bigram_top1 == sweep.bigram_top1[i]
        assert scores.copula_class_accuracy == sweep.copula_class_accuracy[i]
        assert scores.class_mass[data.slot_copula].mean() == pytest.approx(sweep.copula_class_mass[i], abs=1e-14)
        trace = forward(model, data.ids, lengths=data.lengths, intervention=intervention)
        np.testing.assert_allclose(
            copula_attention(trace, data).mean(axis=0), sweep.attention_on_subject[i], atol=1e-15
        )


def test_copula_attention_reads_the_subject_column(model):
    data = corpus()
    trace = forward(model, data.ids, lengths=data.lengths)
    weights = copula_attention(trace, data)
    assert weights.shape == (16, 2, 2)
    s = int(np.flatnonzero(data.slot_copula)[0])
    row, query = data.slot_sentence[s], data.slot_position[s]
    assert np.array_equal(weights[0, 1, 0], trace["blocks.1.attn.hook_pattern"][row, 0, query, query - 1])


@pytest.mark.parametrize("head", HEADS)
def test_patching_a_head_with_its_own_activation_changes_nothing(model, head):
    data = corpus()
    clean = forward(model, data.ids, lengths=data.lengths)
    own = clean[f"blocks.{head[0]}.attn.hook_z"][:, :, head[1], :]
    patched = forward(model, data.ids, lengths=data.lengths, intervention=Intervention(head_outputs={head: own}))
    assert np.array_equal(patched["hook_logits"], clean["hook_logits"])


def test_patching_every_head_carries_the_source_answer(model):
    """Attention is the only channel between positions: with every head's output taken from `the mat is`, the copula
    position of `the cat is` computes exactly what it computes in `the mat is`."""
    target, source = model.encode(["<BOS>", "the", "cat", "is"]), model.encode(["<BOS>", "the", "mat", "is"])
    source_trace, patched = patch_heads(model, target, source, HEADS)
    assert np.array_equal(patched["hook_logits"][-1], source_trace["hook_logits"][-1])
    assert not np.array_equal(patched["hook_logits"][-1], forward(model, target)["hook_logits"][-1])
    with pytest.raises(ValueError):
        patch_heads(model, target, source[:3], HEADS)


@pytest.mark.parametrize("head", HEADS)
def test_mean_ablation_with_zero_is_zero_ablation_bit_for_bit(model, head):
    zero_output = corpus_logits(model, Intervention(head_outputs={head: 0.0}))
    assert np.array_equal(zero_output, corpus_logits(model, Intervention(zero_heads=frozenset({head}))))


@pytest.mark.parametrize("head", HEADS)
def test_mean_ablation_with_a_constant_is_zero_ablation_plus_a_shift_of_b_O(model, head):
    """Replacing head j's output by a constant c everywhere writes c · W_O[rows of j] at every position, so it equals
    zeroing head j's rows of W_O and adding that vector to b_O: mean_ablate(c) = zero_ablate + (c · W_O⁽ʲ⁾ in b_O).
    It is not "zero ablation plus c": c lives in head space, the residual receives c · W_O⁽ʲ⁾."""
    layer, index = head
    c = head_means(model)[head]
    W_O, b_O = model.params[f"blocks.{layer}.attn.W_O"], model.params[f"blocks.{layer}.attn.b_O"]
    rows = slice(3 * index, 3 * index + 3)
    zeroed = np.array(W_O)
    zeroed[rows] = 0.0
    shifted = with_params(
        model, **{f"blocks.{layer}.attn.W_O": zeroed, f"blocks.{layer}.attn.b_O": b_O + c @ W_O[rows]}
    )
    mean_ablated = corpus_logits(model, Intervention(head_outputs={head: c}))
    np.testing.assert_allclose(mean_ablated, corpus_logits(shifted), rtol=0, atol=1e-12)
    assert not np.allclose(mean_ablated, corpus_logits(model, Intervention(zero_heads=frozenset({head}))), atol=1e-6)
    data = corpus()
    mean_trace = forward(model, data.ids, lengths=data.lengths, intervention=Intervention(head_outputs={head: c}))
    zero_trace = forward(model, data.ids, lengths=data.lengths, intervention=Intervention(zero_heads=frozenset({head})))
    if layer == 0:  # same input to the block, so the write-backs differ by exactly the constant row c · W_O⁽ʲ⁾
        difference = mean_trace["blocks.0.hook_attn_out"] - zero_trace["blocks.0.hook_attn_out"]
        np.testing.assert_allclose(difference, np.broadcast_to(c @ W_O[rows], difference.shape), atol=1e-15)


def test_mean_ablation_helper_uses_corpus_means(model):
    data = corpus()
    means = head_means(model)
    total, count = np.zeros((2, 2, 3)), 0
    for row, length in enumerate(data.lengths):
        trace = forward(model, data.ids[row, :length])
        total += np.stack([trace[f"blocks.{layer}.attn.hook_z"].sum(axis=0) for layer in range(2)])
        count += length
    for layer, head in HEADS:
        np.testing.assert_allclose(means[(layer, head)], total[layer, head] / count, atol=1e-14)
    intervention = mean_ablation(model, [(1, 0)])
    assert set(intervention.head_outputs) == {(1, 0)}


def test_neuron_zero_ablation_is_a_zeroed_row_of_W_2(model):
    W_2 = np.array(model.params["blocks.0.mlp.W_2"])
    W_2[5] = 0.0
    by_hand = corpus_logits(with_params(model, **{"blocks.0.mlp.W_2": W_2}))
    assert np.array_equal(corpus_logits(model, neuron_ablation(model, [(0, 5)], "zero")), by_hand)


def test_neuron_mean_ablation_is_a_shift_of_b_2(model):
    mean = neuron_means(model)[1, 2]
    W_2, b_2 = np.array(model.params["blocks.1.mlp.W_2"]), model.params["blocks.1.mlp.b_2"]
    shifted_bias = b_2 + mean * W_2[2]
    W_2[2] = 0.0
    shifted = with_params(model, **{"blocks.1.mlp.W_2": W_2, "blocks.1.mlp.b_2": shifted_bias})
    expected = corpus_logits(shifted)
    np.testing.assert_allclose(corpus_logits(model, neuron_ablation(model, [(1, 2)], "mean")), expected, atol=1e-12)
    with pytest.raises(ValueError):
        neuron_ablation(model, [(0, 0)], "random")


def test_neuron_sweep_structure(model):
    result = neuron_sweep(model, "zero")
    assert set(result) == {"rule_accuracy", "bigram_top1", "copula_class_accuracy"}
    for values in result.values():
        assert values.shape == (2, 8) and ((values >= 0) & (values <= 1)).all()
    assert is_multiple_of(result["rule_accuracy"], 1 / 5)


def test_logit_lens_scores_end_at_the_models_scores(model):
    lens = lens_scores(model)
    assert list(lens)[-1] == "blocks.1.hook_resid_post" and len(lens) == 5
    scores = score_slots(model)
    assert lens["blocks.1.hook_resid_post"]["top-1 on bigram slots"] == scores.bigram_top1
    assert lens["blocks.1.hook_resid_post"]["right class on copula slots"] == scores.copula_class_accuracy
    assert all(0 <= v <= 1 for entry in lens.values() for v in entry.values())


def test_family_sweep_structure():
    members = family()
    result = family_sweep(members)
    assert result.seeds == tuple(m.metadata["seed"] for m in members)
    assert result.labels == ablation_sweep(members[0]).labels
    rule = result.metric("rule_accuracy")
    assert rule.shape == (8, 17)
    assert is_multiple_of(rule, 1 / 5)
    assert ((result.metric("bigram_top1") >= 0) & (result.metric("bigram_top1") <= 1)).all()
    assert result.metric("attention_on_subject").shape == (8, 17, 2, 2)
    assert np.array_equal(result.metric("rule_accuracy")[3], ablation_sweep(members[3]).rule_accuracy)


def test_next_token_table(model):
    table = next_token_table(model, ["<BOS>", "the", "cat", "sat"], k=5)
    assert len(table) == 5
    probabilities = [p for _, p in table]
    assert probabilities == sorted(probabilities, reverse=True)
    probs = forward(model, model.encode(["<BOS>", "the", "cat", "sat"]))["hook_probs"][-1]
    assert table[0] == (model.vocabulary[int(np.argmax(probs))], float(probs.max()))
