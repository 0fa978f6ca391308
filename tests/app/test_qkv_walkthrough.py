"""The 'QKV walkthrough' page in AppTest: default = primer §5, every control changes the numbers it should draw.

Figures are read through the plotly chart's proto spec (JSON). The primer's printed numbers are the test data.
"""

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.explain import experiments as ex
from core.explain.primer import hand_example
from core.explain.weights import trained_model
from tests.app.helpers import chart_specs, numbers, run_page

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "qkv_walkthrough.py")
EXAMPLE = hand_example()
SAT_WEIGHTS = [0.296, 0.286, 0.418]  # primer §5, Step 4
H_LAST = [-0.363, 0.011, 0.837, -0.250, 0.328]  # primer §5, Step 7


def open_page(**query: str) -> AppTest:
    return run_page(PAGE, **query)


def figures(at: AppTest) -> dict[str, dict]:
    """The page's plotly figures by title."""
    return {spec["layout"]["title"]["text"]: spec for spec in chart_specs(at)}


def z(at: AppTest, title: str) -> np.ndarray:
    return numbers(figures(at)[title]["data"][0]["z"])


def text(at: AppTest) -> str:
    return "\n".join(element.value for element in [*at.markdown, *at.caption])


def messages(at: AppTest) -> str:
    return "\n".join(element.value for element in [*at.error, *at.warning])


def run_step(at: AppTest, step: str) -> AppTest:
    at.select_slider(key="qkv_step").set_value(step).run()
    assert not at.exception, at.exception
    return at


def edit(at: AppTest, name: str, row: int, column: str, value: object) -> AppTest:
    """Seed one cell edit in a what-if editor (the editors must be open)."""
    version = at.session_state["qkv_state"]["version"]
    at.session_state[f"qkv_edit_{name}_{version}"] = {
        "edited_rows": {row: {column: value}},
        "added_rows": [],
        "deleted_rows": [],
    }
    at.run()
    assert not at.exception, at.exception
    return at


# ---------------------------------------------------------------- step by step


def test_default_is_the_primer_example():
    at = open_page()
    assert at.title[0].value == "One attention head, step by step"
    np.testing.assert_array_equal(z(at, "X = h⁰"), EXAMPLE.X)
    assert figures(at)["X = h⁰"]["data"][0]["y"] == ["the", "cat", "sat"]
    run_step(at, "weights")
    weights = z(at, "attention weights")
    np.testing.assert_allclose(weights[2], SAT_WEIGHTS, atol=5e-4)
    assert "'sat' takes 42% of its information from itself, 30% from 'the' and 29% from 'cat'." in text(at)
    assert "QK is the routing; V is the payload" in text(at)
    run_step(at, "last")
    np.testing.assert_allclose(z(at, "h_last")[0], H_LAST, atol=5e-4)


@pytest.mark.parametrize(
    ("step", "titles"),
    [
        ("qkv", {"Q = X · W_Q", "K = X · W_K", "V = X · W_V"}),
        ("raw", {"QKᵀ (raw scores)"}),
        ("scaled", {"QKᵀ / √d_k"}),
        ("masked", {"masked scores"}),
        ("z", {"weights · V"}),
        ("wo", {"attention output · W_O"}),
        ("resid", {"h⁰ = X", "+ update", "= h¹"}),
    ],
)
def test_each_step_draws_only_its_own_matrices(step, titles):
    at = run_step(open_page(), step)
    assert set(figures(at)) == titles
    assert "shape" in text(at)


def test_masked_cells_show_minus_infinity_and_the_routing_figure_carries_the_weights():
    at = run_step(open_page(), "masked")
    labels = np.array(figures(at)["masked scores"]["data"][0]["text"])
    assert (labels[np.triu_indices(3, 1)] == "−∞").all()
    assert "−∞" not in labels[np.tril_indices(3)]
    run_step(at, "weights")
    (sankey,) = [spec for title, spec in figures(at).items() if title.startswith("Routing")]
    link = sankey["data"][0]["link"]
    into_sat = {s: v for s, t, v in zip(link["source"], link["target"], numbers(link["value"]), strict=True) if t == 5}
    np.testing.assert_allclose([into_sat[0], into_sat[1], into_sat[2]], SAT_WEIGHTS, atol=5e-4)
    assert len(link["value"]) == 6  # causal: 1 + 2 + 3 edges


def test_switching_scaling_off_sharpens_the_weights():
    at = run_step(open_page(), "scaled")
    scaled = z(at, "QKᵀ / √d_k")
    at.toggle(key="qkv_scale").set_value(False).run()
    unscaled = z(at, "QKᵀ (scaling off)")
    np.testing.assert_allclose(unscaled, scaled * np.sqrt(5))
    run_step(at, "weights")
    assert z(at, "attention weights")[2].max() > 0.418 + 0.05
    assert "sharper weights" in text(at)


def test_switching_the_mask_off_lets_a_token_read_the_future():
    at = open_page(qkv_step="Softmax")
    assert z(at, "attention weights")[0, 1:].sum() == 0
    at.toggle(key="qkv_mask").set_value(False).run()
    assert z(at, "attention weights")[0, 1:].sum() > 0.3
    assert "a token reads the future" in text(at)
    run_step(at, "masked")
    assert "−∞" not in figures(at)["masked scores"]["data"][0]["text"][0]


def test_preset_sentence_changes_the_input_rows():
    at = open_page()
    at.selectbox(key="qkv_sentence").set_value("cat the sat").run()
    spec = figures(at)["X = h⁰"]
    assert spec["data"][0]["y"] == ["cat", "the", "sat"]
    expected = [EXAMPLE.embedding_rows[t] for t in ("cat", "the", "sat")]
    np.testing.assert_array_equal(numbers(spec["data"][0]["z"]), expected)
    run_step(at, "weights")
    assert not np.allclose(z(at, "attention weights")[2], SAT_WEIGHTS, atol=5e-4)


def test_a_valid_edit_updates_everything_downstream_and_the_url():
    at = open_page(qkv_step="· W_O")
    at.toggle(key="qkv_edit").set_value(True).run()
    before = z(at, "attention output · W_O")
    edit(at, "W_O", 0, "d1", 2.0)
    after = z(at, "attention output · W_O")
    np.testing.assert_allclose(after[:, 0], 2 * before[:, 0])
    np.testing.assert_allclose(after[:, 1:], before[:, 1:])
    assert "Your W_O changes the write-back" in text(at)
    assert str(at.query_params["qkv_W_O"]).startswith("2,0,0,0,0;")


@pytest.mark.parametrize("bad", ["abc", None, float("nan"), 1e300, -11.0])
def test_a_bad_edit_gives_a_message_and_keeps_the_last_valid_state(bad):
    at = open_page(qkv_step="· W_O")
    at.toggle(key="qkv_edit").set_value(True).run()
    edit(at, "W_O", 0, "d1", 2.0)
    valid = z(at, "attention output · W_O")
    edit(at, "W_O", 1, "d2", bad)
    assert "W_O not applied" in messages(at) and "last valid W_O" in messages(at)
    np.testing.assert_array_equal(z(at, "attention output · W_O"), valid)


def test_a_bad_input_row_keeps_the_last_valid_rows():
    at = open_page()
    at.toggle(key="qkv_edit").set_value(True).run()
    edit(at, "X", 2, "d1", 1e300)
    assert "X not applied" in messages(at)
    np.testing.assert_array_equal(z(at, "X = h⁰"), EXAMPLE.X)


def test_reset_returns_to_the_primer():
    at = open_page(qkv_step="Softmax", qkv_sentence="sat cat the")
    at.toggle(key="qkv_edit").set_value(True).run()
    edit(at, "W_Q", 0, "d1", -3.0)
    assert not np.allclose(z(at, "attention weights")[2], SAT_WEIGHTS, atol=5e-4)
    at.button(key="qkv_reset").click().run()
    np.testing.assert_allclose(z(at, "attention weights")[2], SAT_WEIGHTS, atol=5e-4)
    assert at.selectbox(key="qkv_sentence").value == "the cat sat"
    assert "qkv_W_Q" not in at.query_params


def test_reset_also_turns_scaling_and_the_mask_back_on():
    at = open_page(qkv_step="Softmax")
    at.toggle(key="qkv_scale").set_value(False).run()
    at.toggle(key="qkv_mask").set_value(False).run()
    assert not np.allclose(z(at, "attention weights")[2], SAT_WEIGHTS, atol=5e-4)
    at.button(key="qkv_reset").click().run()
    assert at.toggle(key="qkv_scale").value and at.toggle(key="qkv_mask").value
    np.testing.assert_allclose(z(at, "attention weights"), [[1, 0, 0], [0.463, 0.537, 0], SAT_WEIGHTS], atol=5e-4)


def test_the_raw_scores_are_shown_at_the_primer_s_rounding():
    at = open_page(qkv_step="Raw QKᵀ")
    labels = figures(at)["QKᵀ (raw scores)"]["data"][0]["text"]
    assert labels == [
        ["0.2055", "0.1175", "-0.1490"],
        ["0.1028", "0.4325", "-0.1945"],
        ["-0.1440", "-0.2220", "0.6260"],
    ]  # primer §5, Step 3, digit for digit
    assert "decimal, half up" in text(at)
    assert "the exact 0.10275 prints as 0.1028, as in the primer, although the computer stores it a hair below" in text(
        at
    )


def test_the_qkv_texts_say_why_q_is_not_cached_and_what_switching_a_block_off_does():
    at = open_page(qkv_step="Q, K, V")
    assert "never Q" not in text(at) and "a past token's query is never used again" in text(at)
    at = run_step(at, "resid")
    off = ex.prompt_row(trained_model(), ex.CAT, off=True).top_token
    assert "the rest still works" not in text(at) and "as a damaged network" in text(at)
    assert f"answers '{off}' after 'the cat is'" in text(at)


def test_the_cache_text_says_the_work_per_token_grows_by_one_row():
    at = open_page(qkv_section="KV cache", qkv_extra="6")
    run_work = [110 + 10 * t for t in range(9)]  # 75 projections + 25 for W_O + 10 per cached row
    spec = figures(at)["Multiply-adds per step"]
    assert numbers(spec["data"][0]["y"]).tolist() == run_work
    assert "stays small" not in text(at)
    assert "from 110 multiply-adds at prefill to 190 at step 8" in text(at)
    assert "by one row of scores per token instead of the whole square" in text(at)


def test_a_shared_url_restores_the_edits_and_refuses_garbage():
    identity = ";".join(",".join("1" if i == j else "0" for j in range(5)) for i in range(5))
    at = open_page(qkv_step="Q, K, V", qkv_W_Q=identity)
    np.testing.assert_array_equal(z(at, "Q = X · W_Q"), EXAMPLE.X)
    for garbage in ("abc", "1,2;3", "nan," * 24 + "nan", ""):
        at = open_page(qkv_step="Q, K, V", qkv_W_K=garbage)
        np.testing.assert_allclose(z(at, "K = X · W_K"), EXAMPLE.X @ EXAMPLE.W_K, rtol=0, atol=1e-15)
        if garbage:
            assert "could not use" in messages(at)


# ---------------------------------------------------------------- read-out


def probabilities(at: AppTest) -> dict[str, float]:
    (spec,) = [s for title, s in figures(at).items() if title.startswith("Next-token probabilities")]
    return dict(zip(spec["data"][0]["x"], numbers(spec["data"][0]["y"]), strict=True))


def test_read_out_at_temperature_one_matches_the_primer():
    at = open_page(qkv_section="Read-out")
    probs = probabilities(at)
    assert {w: round(probs[w], 2) for w in ("mat", "floor", "on")} == {"mat": 0.31, "floor": 0.23, "on": 0.16}
    assert list(probs)[:3] == ["mat", "floor", "on"]
    assert "primer's **illustration**" in text(at)
    assert "Greedy decoding picks **mat**" in "\n".join(s.value for s in at.success)


def test_temperature_sharpens_and_flattens_without_blowing_up():
    at = open_page(qkv_section="Read-out")
    at.slider(key="qkv_temp").set_value(0.05).run()
    cold = probabilities(at)
    assert cold["mat"] > 0.99 and all(np.isfinite(list(cold.values())))
    at.slider(key="qkv_temp").set_value(5.0).run()
    hot = probabilities(at)
    assert hot["mat"] < 0.1 and min(hot.values()) > 0.02


def test_top_k_and_top_p_filter_the_bars():
    at = open_page(qkv_section="Read-out")
    at.number_input(key="qkv_top_k").set_value(3).run()
    kept = {w for w, p in probabilities(at).items() if p > 0}
    assert kept == {"mat", "floor", "on"}
    assert "keep 3 of 20 tokens" in text(at)
    at.number_input(key="qkv_top_k").set_value(0).run()
    at.slider(key="qkv_top_p").set_value(0.5).run()
    assert {w for w, p in probabilities(at).items() if p > 0} == {"mat", "floor"}


def drawn(at: AppTest) -> str:
    (message,) = [s.value for s in at.success if s.value.startswith("Draw")]
    return message


def test_sampling_is_seeded_and_reproducible():
    at = open_page(qkv_section="Read-out")
    at.radio(key="qkv_decoding").set_value("Sample").run()
    for _ in range(5):
        at.button(key="qkv_sample_button").click().run()
    first = drawn(at)
    assert first.startswith("Draw 5 (seed 0)")
    again = open_page(qkv_section="Read-out", qkv_decoding="Sample", qkv_draws="5")
    assert drawn(again) == first
    other = open_page(qkv_section="Read-out", qkv_decoding="Sample", qkv_draws="5", qkv_seed="1")
    assert drawn(other).split("Last draws:")[1] != first.split("Last draws:")[1]
    greedy_only = open_page(qkv_section="Read-out", qkv_decoding="Sample", qkv_draws="5", qkv_top_k="1")
    assert drawn(greedy_only).endswith("Last draws: mat, mat, mat, mat, mat.")


# ---------------------------------------------------------------- KV cache


def test_kv_cache_grows_a_row_per_step():
    at = open_page(qkv_section="KV cache")
    grid = z(at, "K and V cache rows at each step")  # codes + 0.5: 0 absent, 1 reused, 2 fresh
    np.testing.assert_array_equal(grid - 0.5, [[2, 1, 1], [0, 2, 1], [0, 0, 2]])
    assert figures(at)["K cache"]["data"][0]["y"] == ["the · fresh"]
    at.slider(key="qkv_gen_step").set_value(2).run()
    assert figures(at)["K cache"]["data"][0]["y"] == ["the · reused", "cat · reused", "sat · fresh"]
    np.testing.assert_allclose(z(at, "weights over the cache")[0], SAT_WEIGHTS, atol=5e-4)
    assert z(at, "Q (fresh, used once)").shape == (1, 5)
    np.testing.assert_allclose(z(at, "K cache"), EXAMPLE.X @ EXAMPLE.W_K, atol=1e-12)


def test_a_step_beyond_a_shorter_run_is_clamped():
    at = open_page(qkv_section="KV cache", qkv_gen_step="2")
    at.select_slider(key="qkv_prefill").set_value(3).run()
    assert not at.exception
    assert figures(at)["K cache"]["data"][0]["y"] == ["the · fresh", "cat · fresh", "sat · fresh"]
    assert "'sat' takes 42% of its information from itself" in text(at)


def test_prefill_and_made_up_rows_change_the_run():
    at = open_page(qkv_section="KV cache", qkv_prefill="2", qkv_extra="3")
    grid = z(at, "K and V cache rows at each step") - 0.5
    assert grid.shape == (6, 5)  # 6 rows; the prefill and 4 single-token steps
    np.testing.assert_array_equal(grid[:, 0], [2, 2, 0, 0, 0, 0])
    assert figures(at)["K and V cache rows at each step"]["data"][0]["y"][3:] == ["random 1", "random 2", "random 3"]
    assert "random input rows" in "\n".join(s.label for s in at.slider)
    assert "followed by 3 made-up rows drawn at random (seed 0), which are not words" in text(at)


def test_cache_proof_and_work_counts():
    at = open_page(qkv_section="KV cache", qkv_prefill="3")
    assert "0 (bit for bit)" in [m.value for m in at.metric]
    at = open_page(qkv_section="KV cache", qkv_gen_step="2")
    spec = figures(at)["Multiply-adds per step"]
    with_cache, without = (numbers(trace["y"]) for trace in spec["data"])
    assert (with_cache[1:] < without[1:]).all() and with_cache[0] == without[0]
    assert f"{int(with_cache.sum()):,}" in [m.value for m in at.metric]
    # The §5 configuration sums in a fixed order, so the cache reproduces the full pass bit for bit at every step.
    assert next(m.value for m in at.metric if m.label.startswith("max |cached")) == "0 (bit for bit)"


def test_size_formula_uses_the_readers_numbers():
    at = open_page(qkv_section="KV cache")
    assert "17{,}179{,}869{,}184" in at.latex[-1].value  # primer §4: 2·32·32768·32·128·2 ≈ 17 GB
    at.number_input(key="qkv_size_L").set_value(16).run()
    assert "8{,}589{,}934{,}592" in at.latex[-1].value
    assert any("KV-cache cost calculator" in m.value for m in at.markdown)
