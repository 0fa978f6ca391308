"""The primer's checkable sentences against its own printed figures and the toy world, and the numbers the
corrected sentences of the dashboard rest on: the bigram ceilings, the follower counts, the printed rounding, the
W_V = 0 equivalence and the self-attention doubling."""

import numpy as np
import pytest

from core.explain import experiments as ex
from core.explain.analysis import bigram_ceilings, followers, score_slots
from core.explain.primer import hand_example, printed
from core.explain.primer_slips import appendix_a_slips, layer_norm_redo, section6_slips
from core.explain.trace_views import PRIMER_ASSET
from core.explain.transformer import forward, hand_model
from core.explain.weights import trained_model


def by_key(slips):
    return {s.key: s for s in slips}


def test_a_token_only_predictor_tops_out_at_0_625_and_the_position_lifts_it_to_0_699():
    c = bigram_ceilings()
    assert c.n_slots == 432
    assert c.token_only == 270 / 432 == 0.625
    assert round(c.position_aware, 3) == 0.699
    assert c.full_context == c.position_aware  # the rest of the prefix adds nothing on these slots
    # the trained model reaches the position-aware ceiling without reading any other token's content
    assert score_slots(trained_model()).bigram_top1 == pytest.approx(c.position_aware)


def test_eight_tokens_follow_the_and_six_follow_the_first_the():
    assert followers("the") == ("big", "blue", "cat", "dog", "floor", "mat", "red", "small")
    assert followers("the", position=1) == ("big", "cat", "dog", "floor", "mat", "small")


def test_section_6_step_3_sentences_contradict_the_printed_weights():
    slips = by_key(section6_slips())
    head1 = slips["head1_sat_largest"].figures
    assert not slips["head1_sat_largest"].holds
    assert (head1["largest"], head1["largest_weight"], head1["claimed_weight"]) == ("cat", 0.66, 0.058)
    head2 = slips["head2_sat_self"].figures
    assert not slips["head2_sat_self"].holds and head2["claimed_weight"] == 0.488
    cat = slips["head2_cat_the"].figures
    assert not slips["head2_cat_the"].holds and (cat["largest"], cat["largest_weight"]) == ("cat", 0.88)


def test_section_6_step_8_sentences_contradict_the_printed_layernorm():
    slips = by_key(section6_slips())
    gamma = slips["gamma_close_to_3"].figures
    assert not slips["gamma_close_to_3"].holds and (gamma["min"], gamma["max"]) == (2.253, 2.723)
    span = slips["span_about_nine"].figures
    assert not slips["span_about_nine"].holds and round(span["span"], 2) == 6.46


def test_the_refuted_redo_claim_is_gone_because_the_primer_s_re_adding_holds():
    """The primer's ±0.001 is about re-adding displayed intermediates: all five residual additions it prints hold to
    ±0.001 (h_mid = h⁰ + attn, h¹ = h_mid + mlp, and layer 2's), so no slip is listed for it. The LayerNorm redo's
    0.003 is rounding of its inputs (test_redoing_step_8_misses_by_rounding_only), not a sum the primer got wrong."""
    assert "redo_within_0001" not in by_key(section6_slips())
    h0 = np.array(
        [
            [0.115, 1.381, 0.375, 0.804, 0.163, 0.872],
            [0.351, 1.062, -0.193, 1.655, -1.008, 1.604],
            [1.656, -1.109, -0.118, 0.482, -0.588, 0.867],
            [0.189, -1.846, 1.206, 1.472, 0.989, 0.795],
        ]
    )
    attn = np.array(
        [
            [0.546, -1.092, 0.051, 0.332, -0.380, 0.189],
            [0.509, -0.993, 0.280, 0.047, -0.001, -0.089],
            [0.063, -0.209, 0.641, -0.590, 0.919, -0.586],
            [-0.174, 0.150, 0.555, -0.612, 0.981, -0.517],
        ]
    )
    h_mid = np.array(
        [
            [0.661, 0.289, 0.426, 1.136, -0.216, 1.061],
            [0.860, 0.069, 0.088, 1.702, -1.009, 1.515],
            [1.720, -1.318, 0.523, -0.108, 0.331, 0.280],
            [0.015, -1.696, 1.761, 0.861, 1.970, 0.278],
        ]
    )
    mlp = np.array(
        [
            [-0.200, 0.599, 0.047, -0.827, 0.831, -1.312],
            [-0.207, 0.524, 0.040, -0.738, 0.779, -1.182],
            [-0.347, 0.005, 0.385, 0.233, 0.370, -0.163],
            [0.449, 0.818, -0.661, -0.246, -0.869, 0.414],
        ]
    )
    h1 = np.array(
        [
            [0.460, 0.888, 0.473, 0.309, 0.615, -0.251],
            [0.653, 0.593, 0.127, 0.964, -0.230, 0.332],
            [1.373, -1.313, 0.909, 0.125, 0.701, 0.118],
            [0.464, -0.879, 1.100, 0.615, 1.101, 0.692],
        ]
    )
    attn2 = np.array(
        [
            [-0.193, -0.321, -0.141, 0.137, 0.252, 0.461],
            [0.396, -0.107, 0.105, -0.304, -0.044, -0.196],
            [-0.346, 0.546, 0.043, 0.061, 0.114, -0.366],
            [-0.165, 0.341, -0.055, 0.038, 0.137, -0.253],
        ]
    )
    h_mid2 = np.array(
        [
            [0.267, 0.567, 0.331, 0.447, 0.867, 0.211],
            [1.049, 0.486, 0.232, 0.660, -0.274, 0.136],
            [1.027, -0.767, 0.952, 0.186, 0.815, -0.248],
            [0.299, -0.538, 1.045, 0.652, 1.237, 0.439],
        ]
    )
    mlp2 = np.array(
        [
            [-0.130, 0.288, -0.101, 0.487, -1.111, 0.423],
            [0.771, 0.198, -0.414, -1.116, -0.000, 0.343],
            [-0.376, 0.338, -0.123, -0.095, 0.405, -0.127],
            [-0.244, 0.731, -0.180, 0.027, -0.762, 0.424],
        ]
    )
    h2 = np.array(
        [
            [0.138, 0.854, 0.230, 0.933, -0.245, 0.634],
            [1.821, 0.684, -0.182, -0.456, -0.275, 0.480],
            [0.651, -0.429, 0.830, 0.091, 1.220, -0.376],
            [0.054, 0.193, 0.865, 0.679, 0.475, 0.864],
        ]
    )
    pe = np.array(
        [
            [0.000, 1.000, 0.000, 1.000, 0.000, 1.000],
            [0.841, 0.540, 0.046, 0.999, 0.002, 1.000],
            [0.909, -0.416, 0.093, 0.996, 0.004, 1.000],
            [0.141, -0.990, 0.139, 0.990, 0.006, 1.000],
        ]
    )
    e_ids = np.array(
        [
            [0.115, 0.381, 0.375, -0.196, 0.163, -0.128],
            [-0.490, 0.522, -0.239, 0.656, -1.010, 0.604],
            [0.747, -0.693, -0.211, -0.514, -0.593, -0.133],
            [0.048, -0.856, 1.067, 0.482, 0.983, -0.205],
        ]
    )
    additions = [(e_ids, pe, h0), (h0, attn, h_mid), (h_mid, mlp, h1), (h1, attn2, h_mid2), (h_mid2, mlp2, h2)]
    for a, b, total in additions:
        assert np.abs(a + b - total).max() <= 0.001 + 1e-12


def test_section_6_read_out_sentences_against_the_printed_line():
    slips = by_key(section6_slips())
    share = slips["runners_up_share"]  # looks like a slip (0.002 + 0.001), but the printed logits give 0.0024
    assert share.holds
    assert share.figures["printed"] == [0.002, 0.001] and round(share.figures["printed_sum"], 3) == 0.003
    assert round(share.figures["computed_sum"], 4) == 0.0024 and round(share.figures["computed_sum"], 3) == 0.002
    decimals = slips["two_decimal_rounding"]
    assert not decimals.holds and decimals.figures["decimals"] == 3 and decimals.figures["logit_decimals"] == 2
    assert round(decimals.figures["printed_sum"], 3) == 1.0


def test_gelu_is_not_the_model_s_only_nonlinearity():
    only = by_key(section6_slips())["only_nonlinearity"]
    assert not only.holds
    assert round(only.figures["layernorm"], 3) == 3.702  # LN(2x) = LN(x), so LN(2x) - 2·LN(x) = -LN(x)
    assert only.figures["softmax"] > 0.9


def test_d_ff_is_not_about_four_times_d_model_in_the_primer_s_own_7b():
    dff = by_key(section6_slips())["dff_four_times"]
    assert not dff.holds
    assert dff.figures["d_ff"] == [3072, 11008] and dff.figures["d_model"] == [768, 4096]
    assert dff.figures["ratio"][0] == 4.0 and round(dff.figures["ratio"][1], 2) == 2.69
    assert dff.figures["gated"] == [False, True]


def test_the_registry_holds_the_seven_verified_slips_and_the_new_ones():
    slips = by_key((*section6_slips(), *appendix_a_slips()))
    verified = {
        "head1_sat_largest",
        "head2_sat_self",
        "head2_cat_the",
        "gamma_close_to_3",
        "span_about_nine",
        "five_after_the",
        "bigram_could_answer",
    }
    new = {"two_decimal_rounding", "only_nonlinearity", "dff_four_times", "wv_equivalent"}
    assert set(slips) == verified | new | {"runners_up_share"}
    assert not any(slips[k].holds for k in verified | new)
    assert slips["runners_up_share"].holds


def test_redoing_step_8_misses_by_rounding_only():
    import json

    doc = json.loads(PRIMER_ASSET.read_text(encoding="utf-8"))
    redo = layer_norm_redo(doc)
    assert 0.001 < redo["miss"] <= redo["bound"]
    assert round(redo["mean"], 3) == redo["printed_mean"] and round(redo["std"], 3) == redo["printed_std"]
    # perturbing h² inside its printed rounding moves the output by no more than the bound
    rng = np.random.default_rng(0)
    h = np.array(doc["final_layernorm"]["h2_last"])
    for _ in range(200):
        jitter = dict(doc["final_layernorm"], h2_last=(h + rng.uniform(-5e-4, 5e-4, h.size)).tolist())
        moved = layer_norm_redo({"final_layernorm": jitter})["redo"]
        assert np.abs(moved - redo["redo"]).max() <= redo["bound"]


def test_appendix_a_sentences_contradict_the_world_and_the_ceilings():
    slips = by_key(appendix_a_slips())
    five = slips["five_after_the"]
    assert not five.holds and (len(five.figures["anywhere"]), len(five.figures["first"])) == (8, 6)
    could = slips["bigram_could_answer"]
    assert not could.holds and could.figures["token_only"] < could.figures["value"]


def test_printed_rounds_half_up_in_decimal_as_the_primer_prints():
    raw = forward(hand_model(), embeddings=hand_example().X)["blocks.0.attn.hook_attn_scores_raw"][0]
    assert f"{raw[1, 0]:.4f}" == "0.1027"  # float64 stores the exact 0.10275 just below
    assert printed(raw[1, 0], 4) == "0.1028"
    assert [[printed(v, 4) for v in row] for row in raw] == [
        ["0.2055", "0.1175", "-0.1490"],
        ["0.1028", "0.4325", "-0.1945"],
        ["-0.1440", "-0.2220", "0.6260"],
    ]
    assert printed(-0.00004, 3) == "0.000" and printed(0.0005, 3) == "0.001"


def test_w_v_zero_equals_method_2_only_with_the_biases_silenced():
    zeroed, kept = ex.value_checks(trained_model())
    assert zeroed.identical and zeroed.max_abs_delta == 0
    assert not kept.identical and kept.max_abs_delta > 1
    literal = ex.weight_only_check(trained_model())
    assert not literal.identical and round(literal.max_abs_delta, 2) == 2.96
    slip = by_key(appendix_a_slips())["wv_equivalent"]
    assert not slip.holds and round(slip.figures["kept"].max_abs_delta, 2) == 9.35


def test_attending_only_to_itself_doubles_a_token_s_row():
    run = ex.self_attention(hand_model(), hand_example().X)
    assert run.doubled
    np.testing.assert_array_equal(run.h1, 2 * hand_example().X)
    assert run.largest_change == pytest.approx(np.abs(hand_example().X).max())
