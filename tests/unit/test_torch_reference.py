"""An independent reference: the torch module (torch's layer_norm, erf-GELU, scaled_dot_product_attention) and the
numpy engine agree on every logit of the whole corpus, float64, to 1e-12, with and without each intervention."""

import math

import numpy as np
import pytest
import torch

from core.explain.analysis import ablation_sweep, head_means, neuron_means
from core.explain.training import torch_model
from core.explain.transformer import PRIMER_CONFIG, Intervention, erf, forward, gelu, random_model
from core.explain.weights import family, trained_model
from core.explain.world import VOCABULARY, corpus

TOLERANCE = 1e-12
torch.set_num_threads(1)  # tiny tensors: one thread is fastest and deterministic


def models():
    return {
        "trained": trained_model(),
        "family seed 1": family()[0],
        "random seed 3": random_model(PRIMER_CONFIG, seed=3, vocabulary=VOCABULARY),
        "random seed 11": random_model(PRIMER_CONFIG, seed=11, vocabulary=VOCABULARY),
    }


def interventions(model):
    means = head_means(model)
    neurons = neuron_means(model)
    return {
        "none": Intervention(),
        "attention off (Method 2)": Intervention(attention="off"),
        "attention deleted (Method 1)": Intervention(attention="deleted"),
        **{
            f"zero L{layer + 1}H{h + 1}": Intervention(zero_heads=frozenset({(layer, h)}))
            for layer in range(2)
            for h in range(2)
        },
        "zero L1H1 + L2H2": Intervention(zero_heads=frozenset({(0, 0), (1, 1)})),
        "mean-ablate L1H2": Intervention(head_outputs={(0, 1): means[(0, 1)]}),
        "mean-ablate L2H1": Intervention(head_outputs={(1, 0): means[(1, 0)]}),
        "zero neuron L1 n3": Intervention(neurons={(0, 3): 0.0}),
        "mean-ablate neuron L2 n5": Intervention(neurons={(1, 5): neurons[1, 5]}),
    }


def one_at_a_time(module, data, intervention):
    """The torch module, one sentence at a time (no padding at all): a list of (length, V) arrays."""
    with torch.no_grad():
        return [
            module(torch.tensor(data.ids[row : row + 1, :length]), intervention)[0].numpy()
            for row, length in enumerate(data.lengths)
        ]


def batched(module, data, intervention):
    """The torch module on the right-padded corpus (padding is never read under the causal mask)."""
    with torch.no_grad():
        logits = module(torch.tensor(data.ids), intervention).numpy()
    return [logits[row, :length] for row, length in enumerate(data.lengths)]


def worst_difference(engine, reference):
    return max(np.abs(engine[row, : len(ref)] - ref).max() for row, ref in enumerate(reference))


@pytest.mark.parametrize("name", list(models()))
def test_every_logit_of_the_corpus_agrees(name):
    model = models()[name]
    module = torch_model(model)
    data = corpus()
    for label, intervention in interventions(model).items():
        engine = forward(model, data.ids, lengths=data.lengths, intervention=intervention)["hook_logits"]
        worst = worst_difference(engine, batched(module, data, intervention))
        assert worst <= TOLERANCE, f"{name}, {label}: {worst:.3g}"


@pytest.mark.parametrize("label", ["none", "attention off (Method 2)", "zero L1H2", "mean-ablate L2H1"])
def test_one_sentence_at_a_time_without_any_padding(label):
    model = trained_model()
    intervention = interventions(model)[label]
    data = corpus()
    engine = forward(model, data.ids, lengths=data.lengths, intervention=intervention)["hook_logits"]
    assert worst_difference(engine, one_at_a_time(torch_model(model), data, intervention)) <= TOLERANCE


def test_the_batched_sweep_agrees_with_torch_per_configuration():
    model = trained_model()
    module = torch_model(model)
    data = corpus()
    sweep = ablation_sweep(model)
    for i, removed in enumerate(sweep.removed):
        intervention = Intervention(attention="off") if removed is None else Intervention(zero_heads=removed)
        reference = batched(module, data, intervention)
        top = np.array([reference[s][p].argmax() for s, p in zip(data.slot_sentence, data.slot_position, strict=True)])
        bigram = ~data.slot_copula
        assert (top[bigram] == data.slot_target[bigram]).mean() == sweep.bigram_top1[i]
        held = data.slot_copula & data.slot_held_out
        assert (top[held][:, None] == data.slot_class[held]).any(axis=1).mean() == sweep.rule_accuracy[i]
        copula = data.slot_copula
        assert (top[copula][:, None] == data.slot_class[copula]).any(axis=1).mean() == sweep.copula_class_accuracy[i]


def test_gelu_matches_torchs_erf_gelu():
    rng = np.random.default_rng(0)
    z = np.concatenate([np.linspace(-40, 40, 400_001), rng.standard_normal(100_000) * 4, [0.0, -0.0, 8.485, -8.485]])
    reference = torch.nn.functional.gelu(torch.tensor(z), approximate="none").numpy()
    assert np.abs(gelu(z) - reference).max() <= TOLERANCE


def test_erf_matches_math_erf_to_a_few_ulps():
    x = np.concatenate([np.linspace(-7, 7, 200_001), [0.0, 1e-300, -1e-8, 6.0, -6.0, 5.99999, 1e300, -np.inf]])
    reference = np.array([math.erf(v) for v in x])
    assert np.abs(erf(x) - reference).max() <= 4e-16
    assert erf(np.array([np.inf]))[0] == 1.0 and erf(np.array([0.0]))[0] == 0.0
    assert np.isnan(erf(np.array([np.nan, 1.0])))[0] and np.isnan(gelu(np.array([np.nan])))[0]
