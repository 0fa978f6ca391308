"""Faithfulness to primer §6: the engine's primitives recompute what the primer prints (its numbers are test data).

The primer's weights are not printed, so these tests feed the printed intermediates through the engine's own
primitives (sinusoidal table, embedding + positions, GELU, LayerNorm, softmax, tied read-out) and compare with the
printed results, within ±0.002 (the primer rounds every entry to three decimals).
"""

import numpy as np
import pytest

from core.explain.attention import softmax
from core.explain.transformer import PRIMER_CONFIG, forward, gelu, layer_norm, random_model, sinusoidal_positions

ATOL = 0.002
PROMPT = ["<BOS>", "the", "cat", "sat"]

E_ROWS = [  # E[ids] for <BOS> the cat sat
    [0.115, 0.381, 0.375, -0.196, 0.163, -0.128],
    [-0.490, 0.522, -0.239, 0.656, -1.010, 0.604],
    [0.747, -0.693, -0.211, -0.514, -0.593, -0.133],
    [0.048, -0.856, 1.067, 0.482, 0.983, -0.205],
]
PE = [
    [0.000, 1.000, 0.000, 1.000, 0.000, 1.000],
    [0.841, 0.540, 0.046, 0.999, 0.002, 1.000],
    [0.909, -0.416, 0.093, 0.996, 0.004, 1.000],
    [0.141, -0.990, 0.139, 0.990, 0.006, 1.000],
]
H0 = [
    [0.115, 1.381, 0.375, 0.804, 0.163, 0.872],
    [0.351, 1.062, -0.193, 1.655, -1.008, 1.604],
    [1.656, -1.109, -0.118, 0.482, -0.588, 0.867],
    [0.189, -1.846, 1.206, 1.472, 0.989, 0.795],
]
SCORES_1 = [
    [0.033, -np.inf, -np.inf, -np.inf],
    [-0.586, -0.787, -np.inf, -np.inf],
    [-0.992, -0.477, 0.573, -np.inf],
    [-0.122, 1.233, 2.304, -0.161],
]
WEIGHTS_1 = [
    [1.000, 0.000, 0.000, 0.000],
    [0.550, 0.450, 0.000, 0.000],
    [0.134, 0.224, 0.641, 0.000],
    [0.058, 0.226, 0.660, 0.056],
]
ATTN = [
    [0.546, -1.092, 0.051, 0.332, -0.380, 0.189],
    [0.509, -0.993, 0.280, 0.047, -0.001, -0.089],
    [0.063, -0.209, 0.641, -0.590, 0.919, -0.586],
    [-0.174, 0.150, 0.555, -0.612, 0.981, -0.517],
]
H_MID = [
    [0.661, 0.289, 0.426, 1.136, -0.216, 1.061],
    [0.860, 0.069, 0.088, 1.702, -1.009, 1.515],
    [1.720, -1.318, 0.523, -0.108, 0.331, 0.280],
    [0.015, -1.696, 1.761, 0.861, 1.970, 0.278],
]
PRE = [
    [1.050, 0.446, 0.578, -1.281, 0.431, -2.046, 0.553, 1.590],
    [0.976, 0.396, 0.539, -1.394, 0.452, -2.216, 0.728, 1.603],
    [-1.437, -1.079, -1.626, -1.364, 1.130, -0.463, -0.477, -2.145],
    [-0.088, 0.054, -0.814, 0.739, 0.554, 2.029, -2.270, -1.688],
]
ACT = [
    [0.896, 0.300, 0.415, -0.128, 0.287, -0.042, 0.392, 1.501],
    [0.815, 0.259, 0.380, -0.114, 0.305, -0.030, 0.558, 1.515],
    [-0.108, -0.151, -0.085, -0.118, 0.984, -0.149, -0.151, -0.034],
    [-0.041, 0.028, -0.169, 0.569, 0.393, 1.986, -0.026, -0.077],
]
MLP = [
    [-0.200, 0.599, 0.047, -0.827, 0.831, -1.312],
    [-0.207, 0.524, 0.040, -0.738, 0.779, -1.182],
    [-0.347, 0.005, 0.385, 0.233, 0.370, -0.163],
    [0.449, 0.818, -0.661, -0.246, -0.869, 0.414],
]
H1 = [
    [0.460, 0.888, 0.473, 0.309, 0.615, -0.251],
    [0.653, 0.593, 0.127, 0.964, -0.230, 0.332],
    [1.373, -1.313, 0.909, 0.125, 0.701, 0.118],
    [0.464, -0.879, 1.100, 0.615, 1.101, 0.692],
]
ATTN_2 = [
    [-0.193, -0.321, -0.141, 0.137, 0.252, 0.461],
    [0.396, -0.107, 0.105, -0.304, -0.044, -0.196],
    [-0.346, 0.546, 0.043, 0.061, 0.114, -0.366],
    [-0.165, 0.341, -0.055, 0.038, 0.137, -0.253],
]
H_MID_2 = [
    [0.267, 0.567, 0.331, 0.447, 0.867, 0.211],
    [1.049, 0.486, 0.232, 0.660, -0.274, 0.136],
    [1.027, -0.767, 0.952, 0.186, 0.815, -0.248],
    [0.299, -0.538, 1.045, 0.652, 1.237, 0.439],
]
MLP_2 = [
    [-0.130, 0.288, -0.101, 0.487, -1.111, 0.423],
    [0.771, 0.198, -0.414, -1.116, -0.000, 0.343],
    [-0.376, 0.338, -0.123, -0.095, 0.405, -0.127],
    [-0.244, 0.731, -0.180, 0.027, -0.762, 0.424],
]
H2 = [
    [0.138, 0.854, 0.230, 0.933, -0.245, 0.634],
    [1.821, 0.684, -0.182, -0.456, -0.275, 0.480],
    [0.651, -0.429, 0.830, 0.091, 1.220, -0.376],
    [0.054, 0.193, 0.865, 0.679, 0.475, 0.864],
]
GAMMA = [2.253, 2.390, 2.512, 2.328, 2.723, 2.476]
BETA = [-0.339, -0.496, -0.744, 0.154, -0.418, 0.055]
LN_LAST = [-3.702, -3.005, 2.011, 1.323, -0.821, 2.758]
VOCAB = [
    "<PAD>", "<BOS>", "<EOS>", "<SEP>", "the", "cat", "dog", "mat", "floor", "sat",
    "ran", "is", "was", "on", "big", "small", "red", "blue", "fast", "slow",
]  # fmt: skip
LOGITS = [
    -1.061, -1.561, 1.816, -1.123, 3.128, -1.668, -2.273, -7.735, -7.690, 3.806,
    2.051, -5.294, -4.888, 10.255, -3.425, -3.823, -1.211, -0.718, 1.318, 1.405,
]  # fmt: skip
PROBS = [
    0.000, 0.000, 0.000, 0.000, 0.001, 0.000, 0.000, 0.000, 0.000, 0.002,
    0.000, 0.000, 0.000, 0.997, 0.000, 0.000, 0.000, 0.000, 0.000, 0.000,
]  # fmt: skip
PRINTED_ROUNDING = 0.0005


def test_sinusoidal_table_4_by_6():
    np.testing.assert_allclose(sinusoidal_positions(4, 6), PE, atol=PRINTED_ROUNDING + 1e-12)


def test_embedding_rows_plus_positions_give_h0():
    trace = forward(random_model(PRIMER_CONFIG, seed=0), embeddings=np.array(E_ROWS))
    np.testing.assert_allclose(trace["hook_pos_embed"], PE, atol=PRINTED_ROUNDING + 1e-12)
    np.testing.assert_allclose(trace["blocks.0.hook_resid_pre"], H0, atol=ATOL)


def test_gelu_of_pre_is_act():
    np.testing.assert_allclose(gelu(np.array(PRE)), ACT, atol=ATOL)


def test_masked_softmax_of_head_1_scores_gives_its_weights():
    np.testing.assert_allclose(softmax(np.array(SCORES_1), axis=-1), WEIGHTS_1, atol=ATOL)


@pytest.mark.parametrize(
    ("before", "write", "after"),
    [(H0, ATTN, H_MID), (H_MID, MLP, H1), (H1, ATTN_2, H_MID_2), (H_MID_2, MLP_2, H2)],
    ids=["h_mid = h0 + attn", "h1 = h_mid + mlp", "h_mid2 = h1 + attn2", "h2 = h_mid2 + mlp2"],
)
def test_residual_additions(before, write, after):
    np.testing.assert_allclose(np.add(before, write), after, atol=ATOL)


def test_final_layer_norm_with_the_printed_gamma_beta():
    """LN(h²_last) with the printed γ, β. The printed h²_last is rounded to ±0.0005 and the LN multiplies that by
    γ/σ ≈ 8, so the direct recomputation can be off by more than the printed rounding. Two checks, both exact claims:
    (1) a point inside h²_last's rounding box maps to the printed LN(h²)_last within ±0.002 (the engine's LN *is* the
    primer's), found by Gauss–Newton with the engine's own layer_norm; (2) the direct recomputation stays within the
    error the rounding of h²_last, γ and β can cause (propagated through the engine's LN, not typed in)."""
    h, gamma, beta, printed = (np.array(v) for v in (H2[-1], GAMMA, BETA, LN_LAST))
    assert h.mean() == pytest.approx(0.522, abs=PRINTED_ROUNDING)
    assert h.std() == pytest.approx(0.313, abs=PRINTED_ROUNDING)

    def ln(x):
        return layer_norm(x, gamma, beta)

    def jacobian(x):
        step = 1e-6
        return np.stack([(ln(x + step * e) - ln(x - step * e)) / (2 * step) for e in np.eye(6)], axis=1)

    x = h.copy()
    for _ in range(3):  # minimum-norm steps (LN ignores shifts and scalings of its input, so J has rank 4)
        x = x + np.linalg.lstsq(jacobian(x), printed - ln(x), rcond=1e-3)[0]
    assert np.abs(x - h).max() <= PRINTED_ROUNDING
    np.testing.assert_allclose(ln(x), printed, atol=ATOL)

    z = (h - h.mean()) / np.sqrt(h.var() + 1e-5)
    bound = np.abs(jacobian(h)).sum(axis=1) * PRINTED_ROUNDING + (np.abs(z) + 2) * PRINTED_ROUNDING
    assert (np.abs(ln(h) - printed) <= bound).all()


def test_final_ln_times_embedding_rows_give_the_printed_logits():
    logits = np.array(E_ROWS) @ np.array(LN_LAST)
    expected = [LOGITS[VOCAB.index(token)] for token in PROMPT]
    np.testing.assert_allclose(logits, expected, atol=ATOL)


def test_softmax_of_the_printed_logits_is_the_printed_distribution():
    probs = softmax(np.array(LOGITS))
    np.testing.assert_allclose(probs, PROBS, atol=ATOL)
    assert VOCAB[int(np.argmax(probs))] == "on"
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
