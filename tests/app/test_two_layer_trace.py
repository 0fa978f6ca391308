"""The 'Two-layer trace' page in Streamlit's AppTest: the default is the primer's §6 prompt, the prompt builder drives
every figure, bad prompts give a message and keep the last valid prompt, and every step and tab draws the engine's
numbers. Figures are read through the plotly proto spec (JSON), so the tests check the numbers drawn."""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.explain.trace_views import MAX_TOKENS, copula_table, primer_section6, shape_table, top_k
from core.explain.transformer import PRIMER_CONFIG, forward
from core.explain.weights import trained_model, training_log
from tests.app.helpers import chart_specs as specs
from tests.app.helpers import numbers, run_page, shown

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "two_layer_trace.py")
MODEL = trained_model()
STEP_NAMES = {row.key: row.step for row in shape_table(PRIMER_CONFIG, 4)}


def open_page(**query: str) -> AppTest:
    return run_page(PAGE, **query)


def trace_of(prompt: str):
    return forward(MODEL, MODEL.encode(prompt.split()))


def z(spec: dict) -> np.ndarray:
    return numbers(spec["data"][0]["z"])


def text(at: AppTest) -> str:
    return "\n".join(e.value for e in [*at.markdown, *at.caption, *at.subheader])


def set_prompt(at: AppTest, prompt: str) -> AppTest:
    at.text_input(key="trace_prompt").set_value(prompt).run()
    assert not at.exception, at.exception
    return at


def test_default_is_the_primers_prompt_and_answer():
    at = open_page()
    assert at.title[0].value == "Two layers, every matrix"
    assert at.text_input(key="trace_prompt").value == "<BOS> the cat sat"
    probs = trace_of("<BOS> the cat sat")["hook_probs"][-1]
    assert f"next token **on** with probability **{probs.max():.3f}**" in text(at)
    assert "736 parameters" in text(at)
    (spec,) = specs(at)  # the default step draws one matrix: the tokens' embedding rows
    assert z(spec) == pytest.approx(trace_of("<BOS> the cat sat")["hook_embed"])
    assert spec["data"][0]["y"] == ["1 <BOS>", "2 the", "3 cat", "4 sat"]


def test_a_prompt_change_changes_every_figure():
    at = open_page(trace_step=STEP_NAMES["h0"])
    before = [z(s) for s in specs(at)]
    set_prompt(at, "<BOS> the mat is")
    after = specs(at)
    assert len(after) == 3
    assert z(after[0]) == pytest.approx(trace_of("<BOS> the mat is")["hook_embed"])
    assert z(after[2]) == pytest.approx(trace_of("<BOS> the mat is")["blocks.0.hook_resid_pre"])
    assert not np.allclose(before[0], z(after[0]))
    assert "3 mat" in after[0]["data"][0]["y"]
    assert np.allclose(before[1], z(after[1]))  # the positional rows do not depend on the words


def test_a_longer_prompt_changes_T_everywhere():
    at = open_page(trace_step=STEP_NAMES["weights"])
    set_prompt(at, "<BOS> the big cat sat on the")
    assert "T = 7" in at.radio(key="trace_step").label
    patterns = [z(s) for s in specs(at) if "weights" in s["layout"]["title"]["text"]]
    assert len(patterns) == 2 and all(p.shape == (7, 7) for p in patterns)
    expected = trace_of("<BOS> the big cat sat on the")["blocks.0.attn.hook_pattern"]
    assert patterns[1] == pytest.approx(expected[1])


def test_an_unknown_word_gives_a_message_and_keeps_the_last_valid_prompt():
    at = open_page()
    set_prompt(at, "<BOS> the mat is")
    good = z(specs(at)[0])
    set_prompt(at, "<BOS> the zebra is")
    assert len(at.error) == 1
    message = shown(at.error[0].value)
    assert "'zebra'" in message and "<PAD> <BOS> <EOS> <SEP> the cat dog" in message
    assert "<BOS> the mat is" in message
    assert z(specs(at)[0]) == pytest.approx(good)
    set_prompt(at, "<BOS> the dog")  # a valid prompt clears the message
    assert not at.error


def test_an_over_long_prompt_gives_a_message_and_keeps_the_last_valid_prompt():
    at = open_page()
    set_prompt(at, "<BOS> the cat is")
    good = z(specs(at)[0])
    set_prompt(at, "<BOS> " + " ".join(["the cat"] * MAX_TOKENS))
    assert len(at.error) == 1 and f"at most {MAX_TOKENS}" in at.error[0].value
    assert z(specs(at)[0]) == pytest.approx(good)


def test_an_empty_prompt_gives_a_message():
    at = open_page()
    set_prompt(at, "   ")
    assert at.error and "empty" in at.error[0].value
    assert z(specs(at)[0]) == pytest.approx(trace_of("<BOS> the cat sat")["hook_embed"])


def test_bos_is_added_when_missing():
    at = open_page()
    set_prompt(at, "the dog was")
    assert not at.error and "<BOS> was put in front" in text(at)
    assert specs(at)[0]["data"][0]["y"][0] == "1 <BOS>"


def test_clicking_tokens_presets_and_remove_last_edit_the_prompt():
    at = open_page()
    at.pills(key="trace_add").set_value("on").run()
    assert at.text_input(key="trace_prompt").value == "<BOS> the cat sat on"
    assert at.pills(key="trace_add").value is None  # ready for the next click
    assert "**<BOS> the cat sat on**" in text(at)
    at.button(key="trace_pop").click().run()
    assert at.text_input(key="trace_prompt").value == "<BOS> the cat sat"
    presets = at.selectbox(key="trace_preset")
    assert [o.split("  (")[0] for o in presets.options[:3]] == [
        "<BOS> the cat sat",
        "<BOS> the cat is",
        "<BOS> the mat is",
    ]
    held_out = [o for o in presets.options if "held out" in o]
    assert len(held_out) == 8
    presets.set_value("<BOS> the cat is").run()
    assert at.text_input(key="trace_prompt").value == "<BOS> the cat is"
    assert at.selectbox(key="trace_preset").value is None


@pytest.mark.parametrize("key", list(STEP_NAMES))
def test_every_step_draws_its_matrices_with_shapes(key):
    at = open_page(trace_step=STEP_NAMES[key])
    assert at.radio(key="trace_step").value == key
    charts = specs(at)
    assert charts, key
    assert "What this step did." in text(at)
    assert len(at.get("download_button")) >= len(charts)  # every matrix downloadable


def test_qkv_shows_the_head_boundary_and_the_engines_numbers():
    at = open_page(trace_step=STEP_NAMES["qkv"], trace_layer="Layer 2")
    q = specs(at)[0]
    assert z(q) == pytest.approx(trace_of("<BOS> the cat sat")["blocks.1.attn.hook_q"].reshape(4, 6))
    assert [shape["x0"] for shape in q["layout"]["shapes"]] == [2.5]  # between column 3 and 4


def test_mlp_steps_show_the_width_change():
    at = open_page(trace_step=STEP_NAMES["mlp_pre"])
    widths = [z(s).shape[1] for s in specs(at)]
    assert widths == [6, 8]
    at = open_page(trace_step=STEP_NAMES["mlp_out"])
    assert [z(s).shape[1] for s in specs(at)] == [8, 6]
    act = trace_of("<BOS> the cat sat")["blocks.0.mlp.hook_post"]
    assert z(specs(at)[0]) == pytest.approx(act)


def test_final_layernorm_shows_gamma_and_beta():
    at = open_page(trace_step=STEP_NAMES["final_ln"])
    lines = z(specs(at)[0])
    assert lines[1] == pytest.approx(MODEL.params["ln_final.gamma"])
    assert lines[2] == pytest.approx(MODEL.params["ln_final.beta"])
    assert lines[3] == pytest.approx(trace_of("<BOS> the cat sat")["ln_final.hook_normalized"][-1])


def test_displayed_top5_equals_the_engines_and_temperature_reshapes_it():
    at = open_page(trace_step=STEP_NAMES["probs"])
    logits = trace_of("<BOS> the cat sat")["hook_logits"][-1]
    (table,) = [df for df in at.dataframe]
    engine = top_k(logits, MODEL.vocabulary, 5)
    assert list(table.value["token"]) == [r.token for r in engine]
    assert list(table.value["probability"]) == [round(r.probability, 3) for r in engine]
    bars = numbers(specs(at)[0]["data"][0]["y"])
    assert bars == pytest.approx(trace_of("<BOS> the cat sat")["hook_probs"][-1])
    at.slider(key="trace_tau").set_value(2.5).run()
    hot = numbers(specs(at)[0]["data"][0]["y"])
    assert hot.max() < bars.max() and hot.sum() == pytest.approx(1.0)
    assert list(at.dataframe[0].value["token"]) == [r.token for r in top_k(logits, MODEL.vocabulary, 5, 2.5)]


def test_four_heads_side_by_side():
    at = open_page(trace_view="Four heads", trace_prompt="<BOS> the cat is")
    patterns = [z(s) for s in specs(at)]
    trace = trace_of("<BOS> the cat is")
    expected = [trace[f"blocks.{la}.attn.hook_pattern"][he] for la in range(2) for he in range(2)]
    assert len(patterns) == 4
    for drawn, want in zip(patterns, expected, strict=True):
        assert drawn == pytest.approx(want)


def test_residual_stream_and_logit_lens():
    at = open_page(trace_view="Residual stream")
    norms, paths, lens = specs(at)
    assert len(norms["data"]) == 4 and len(norms["data"][0]["y"]) == 5  # one line per token over 5 stages
    assert len(paths["data"]) == 4
    lens_z = z(lens)
    assert lens_z.shape == (5, 20)
    assert lens_z[-1] == pytest.approx(trace_of("<BOS> the cat sat")["hook_probs"][-1])


def test_copula_probe_side_by_side_and_the_16_types():
    at = open_page(trace_view="Copula probe")
    (chart,) = specs(at)
    prompts = ["the cat is", "the mat is", "the dog was", "the floor was"]
    assert [label.split(" …")[0] for label in chart["data"][0]["x"]] == prompts
    assert [series["name"] for series in chart["data"]] == ["big", "small", "red", "blue"]
    for i, prompt in enumerate(prompts):
        probs = trace_of(f"<BOS> {prompt}")["hook_probs"][-1]
        drawn = [numbers(series["y"])[i] for series in chart["data"]]
        assert drawn == pytest.approx([probs[MODEL.vocabulary.index(w)] for w in ("big", "small", "red", "blue")])
        in_class = ("big", "small") if i in (0, 2) else ("red", "blue")
        mass = sum(probs[MODEL.vocabulary.index(w)] for w in in_class)
        assert f"class mass {mass:.3f}" in chart["data"][0]["x"][i]
    (table,) = at.dataframe
    rows = copula_table(MODEL)
    assert len(table.value) == 16 and (table.value["held out of training"] == "held out").sum() == 5
    assert list(table.value["class-adjective mass"]) == [round(r.class_mass, 3) for r in rows]


def test_training_log_with_the_rule_marked_and_the_corpus():
    at = open_page(trace_view="How the weights came to be")
    loss, accuracy = specs(at)
    log = training_log(MODEL)
    assert numbers(loss["data"][0]["y"]) == pytest.approx(log["loss"])
    marked = accuracy["layout"]["shapes"][0]["x0"]
    first_full = log["step"][int(np.argmax(np.array(log["rule_accuracy_held_out"]) >= 1.0))]
    assert marked == first_full
    corpus = at.dataframe[0].value
    assert len(corpus) == 64 and (corpus["held out of training"] == "held out").sum() == 8


def test_primer_vs_ours_reads_the_asset_and_our_model():
    at = open_page(trace_view="Primer vs ours")
    primer = primer_section6()
    top5, probe = at.dataframe[0].value, at.dataframe[1].value
    assert [m.value for m in at.metric][:2] == [
        f"{primer.readout['p_on']:.3f}",
        f"{trace_of('<BOS> the cat sat')['hook_probs'][-1][MODEL.vocabulary.index('on')]:.3f}",
    ]
    assert list(top5["primer: token"]) == [r["token"] for r in primer.readout["top5"]]
    ours = top_k(trace_of("<BOS> the cat sat")["hook_logits"][-1], MODEL.vocabulary, 5)
    assert list(top5["ours: token"]) == [r.token for r in ours]
    assert "big 0.532" in probe["primer's model"][0]
    theirs_attention, ours_attention, *layer1, ln = (z(s) for s in specs(at))
    assert theirs_attention == pytest.approx(primer.query_attention)
    trace = trace_of("<BOS> the cat is")
    assert ours_attention[2] == pytest.approx(trace["blocks.1.attn.hook_pattern"][0, -1])
    ours_layer1 = trace_of("<BOS> the cat sat")["blocks.0.attn.hook_pattern"]
    printed = [np.array(row["weights"]) for row in primer.layer1_patterns["heads"]]
    assert len(layer1) == 4  # primer head 1, ours head 1, primer head 2, ours head 2
    assert layer1[0] == pytest.approx(printed[0]) and layer1[2] == pytest.approx(printed[1])
    assert layer1[1] == pytest.approx(ours_layer1[0]) and layer1[3] == pytest.approx(ours_layer1[1])
    printed_ln = [primer.final_layernorm[k] for k in ("h2_last", "gamma", "beta", "normalized_last")]
    assert ln[:4] == pytest.approx(np.array(printed_ln))
    cat_sat = trace_of("<BOS> the cat sat")
    assert ln[4] == pytest.approx(cat_sat["blocks.1.hook_resid_post"][-1])
    assert ln[5] == pytest.approx(MODEL.params["ln_final.gamma"])
    assert ln[7] == pytest.approx(cat_sat["ln_final.hook_normalized"][-1])
    assert "Same behaviour" in text(at) and f"primer {primer.readout['p_on']:.3f}" in text(at)


def test_primer_vs_ours_shows_step_8_all_20_logits_and_the_class_mass_range():
    at = open_page(trace_view="Primer vs ours")
    primer = primer_section6()
    metrics = {m.label: m.value for m in at.metric}
    ln = primer.final_layernorm
    assert metrics["mean of h²_last, primer"] == f"{ln['mean_before']:.3f}" == "0.522"
    assert metrics["σ of h²_last, primer"] == f"{ln['std_before']:.3f}" == "0.313"
    h2 = trace_of("<BOS> the cat sat")["blocks.1.hook_resid_post"][-1]
    assert metrics["mean of h²_last, ours"] == f"{h2.mean():.3f}"
    mass = primer.copula_probe["all_types"]
    assert metrics["class-adjective mass on all copula types, primer"] == "0.92–0.99"
    masses = [r.class_mass for r in copula_table(MODEL)]
    assert metrics["class-adjective mass on all copula types, ours"] == f"{min(masses):.2f}–{max(masses):.2f}"
    assert (mass["class_mass_min"], mass["class_mass_max"]) == (0.92, 0.99)
    table = next(d.value for d in at.dataframe if "token" in d.value.columns and "primer: logit" in d.value.columns)
    assert len(table) == 20 and list(table["token"]) == list(MODEL.vocabulary)
    by_token = dict(zip(primer.vocabulary, primer.readout["logits"], strict=True))
    assert list(table["primer: logit"]) == [by_token[t] for t in MODEL.vocabulary]
    assert table.set_index("token").loc["on", "primer: logit"] == 10.255
    assert table.set_index("token").loc["on", "primer: probability"] == 0.997
    ours = trace_of("<BOS> the cat sat")["hook_logits"][-1]
    assert table["ours: logit"].to_numpy() == pytest.approx(ours, abs=5e-4)


def test_primer_vs_ours_points_out_the_primer_s_step_3_and_step_8_slips():
    at = open_page(trace_view="Primer vs ours")
    shown = text(at)
    assert shown.count("Where the primer's text and its numbers disagree") == 3  # Step 3, Step 8's norm, the read-out
    # Step 3: head 1's sat row puts 0.660 on cat, not its largest share on <BOS> (0.058)
    assert "the largest share is on cat (0.660); <BOS> gets 0.058" in shown.replace("`", "")
    assert "sat keeps 0.488 of the weight, less than half" in shown
    assert "the largest share is on cat (0.880); the gets 0.077" in shown
    # Step 8: γ runs 2.253–2.723, the output spans 6.46; the refuted "redo within ±0.001" box is gone (the primer's
    # ±0.001 is about re-adding, which holds; the LayerNorm redo's 0.003 is rounding of its inputs)
    assert "γ from 2.253 to 2.723" in shown and "the entries span 6.46, not about 9" in shown
    assert "up to 0.003 from the printed line" not in shown and "±0.001" not in shown
    # the read-out: three decimals printed, not two; "share 0.002" checks out against the printed logits
    assert "the distribution is printed to 3 decimals, not 2" in shown
    assert shown.count("Looks like a slip, checks out") == 1
    assert "= 0.0024, which is 0.002 at three decimals: the sentence is right" in shown


def test_state_comes_back_from_the_url():
    at = open_page(trace_prompt="<BOS> the floor was", trace_step=STEP_NAMES["scores"], trace_layer="Layer 2")
    assert at.text_input(key="trace_prompt").value == "<BOS> the floor was"
    assert at.radio(key="trace_step").value == "scores"
    raw = trace_of("<BOS> the floor was")["blocks.1.attn.hook_attn_scores_raw"][0]
    assert z(specs(at)[0]) == pytest.approx(raw)


def test_each_row_shows_its_live_shape_and_the_link_names_the_picked_step():
    at = open_page()
    radio = at.radio(key="trace_step")
    assert radio.options[3] == f"{STEP_NAMES['qkv']} :gray[· LN₁(h) W_Q + b_Q, etc. · **4\u00a0×\u00a06**]"
    radio.set_value("concat").run()
    assert at.query_params["trace_step"] == STEP_NAMES["concat"]
    at.radio(key="trace_step").set_value("ids").run()  # the first row is the default: the link leaves it out
    assert "trace_step" not in at.query_params
    set_prompt(at, "<BOS> the mat is on")
    radio = at.radio(key="trace_step")
    assert radio.options[3].endswith("**5\u00a0×\u00a06**]") and radio.value == "ids"


def test_a_link_followed_inside_the_session_picks_its_row_and_a_bad_one_is_named():
    at = open_page()
    at.query_params["trace_step"] = STEP_NAMES["weights"]  # as an in-app link from the overview arrives
    at.run()
    assert at.radio(key="trace_step").value == "weights"
    at.query_params["trace_step"] = "**no such step**"
    at.run()
    at.run()  # the notice is drawn above the step list, so it shows from the next run
    assert at.radio(key="trace_step").value == "weights"
    notice = "\n".join(w.value for w in at.warning)
    assert "\\*\\*no such step\\*\\*" in notice and "the row shown is kept" in notice


@pytest.mark.parametrize("prompt", ["<BOS>", "<BOS> " + " ".join(["the"] * (MAX_TOKENS - 1))])
def test_the_shortest_and_longest_prompts_draw_every_step_in_both_layers(prompt):
    at = open_page(trace_prompt=prompt)
    T = len(prompt.split())
    for layer in ("Layer 1", "Layer 2"):
        at.segmented_control(key="trace_layer").set_value(layer).run()
        for key in STEP_NAMES:
            at.radio(key="trace_step").set_value(key).run()
            assert not at.exception and not at.error, (layer, key)
            assert specs(at), (layer, key)
    at.radio(key="trace_step").set_value("weights").run()
    assert all(z(s).shape == (T, T) for s in specs(at))


def test_the_mlp_is_called_the_only_element_wise_non_linearity_not_the_only_one():
    at = open_page()
    at.radio(key="trace_step").set_value("mlp_post").run()
    shown = text(at)
    assert "only element-wise non-linearity" in shown and "softmax and LayerNorm bend too" in shown
    assert "only non-linear step" not in shown
