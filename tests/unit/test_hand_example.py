"""The §5 hand example through the shared forward pass reproduces the primer's printed matrices (3 decimals)."""

import numpy as np
import pytest

from core.explain.transformer import forward, hand_model

PRINTED = {
    "blocks.0.attn.hook_q": [
        [0.300, -0.125, 0.050, 0.450, 0.050],
        [0.400, 0.500, -0.100, 0.350, 0.250],
        [-0.550, 0.200, 0.600, -0.500, 0.250],
    ],
    "blocks.0.attn.hook_k": [
        [0.040, -0.140, 0.085, 0.365, 0.150],
        [0.340, 0.460, -0.070, 0.170, 0.000],
        [-0.300, 0.000, 0.510, -0.210, 0.200],
    ],
    "blocks.0.attn.hook_v": [
        [-0.050, 0.150, 0.050, 0.400, 0.150],
        [0.400, -0.100, -0.100, 0.200, 0.000],
        [-0.150, -0.250, 0.600, -0.300, 0.200],
    ],
    "blocks.0.attn.hook_attn_scores_raw": [
        [0.2055, 0.1175, -0.1490],
        [0.1028, 0.4325, -0.1945],
        [-0.1440, -0.2220, 0.6260],
    ],
    "blocks.0.attn.hook_attn_scores": [[0.092, 0.053, -0.067], [0.046, 0.193, -0.087], [-0.064, -0.099, 0.280]],
    "blocks.0.attn.hook_pattern": [[1.000, 0.000, 0.000], [0.463, 0.537, 0.000], [0.296, 0.286, 0.418]],
    "blocks.0.attn.hook_z": [
        [-0.050, 0.150, 0.050, 0.400, 0.150],
        [0.192, 0.016, -0.031, 0.293, 0.069],
        [0.037, -0.089, 0.237, 0.050, 0.128],
    ],
}


@pytest.fixture(scope="module")
def trace():
    model = hand_model()
    assert model.token_ids == [0, 1, 3]
    return forward(model, model.token_ids)


@pytest.mark.parametrize("name", sorted(PRINTED))
def test_printed_matrices(trace, name):
    value = trace[name]
    if name.endswith(("hook_q", "hook_k", "hook_v", "hook_z")):
        value = value[:, 0, :]  # T × head × d_head → the single head
    elif name.endswith(("hook_attn_scores_raw", "hook_attn_scores", "hook_pattern")):
        value = value[0]  # head × T × T → the single head
    np.testing.assert_allclose(value, PRINTED[name], atol=6e-4 if name.endswith("raw") else 5e-4)


def test_mask_and_last_row(trace):
    masked = trace["blocks.0.attn.hook_attn_scores_masked"][0]
    assert np.isneginf(masked[np.triu_indices(3, 1)]).all()
    np.testing.assert_allclose(trace["blocks.0.hook_resid_post"][-1], [-0.363, 0.011, 0.837, -0.250, 0.328], atol=5e-4)
    # W_O = I: the write-back is the attention output itself, added to h⁰.
    np.testing.assert_array_equal(trace["blocks.0.hook_attn_out"], trace["blocks.0.attn.hook_concat"])


def test_unknown_embedding_rows_are_refused():
    model = hand_model()
    with pytest.raises(ValueError, match="no embedding row is known for dog"):
        forward(model, model.encode(["the", "dog"]))
