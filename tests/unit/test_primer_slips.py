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
    redo = slips["redo_within_0001"]
    assert not redo.holds and round(redo.figures["miss"], 3) == 0.003


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


def test_attending_only_to_itself_doubles_a_token_s_row():
    run = ex.self_attention(hand_model(), hand_example().X)
    assert run.doubled
    np.testing.assert_array_equal(run.h1, 2 * hand_example().X)
    assert run.largest_change == pytest.approx(np.abs(hand_example().X).max())
