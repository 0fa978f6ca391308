"""The Ablation lab page in Streamlit's AppTest: the bench follows the head toggles, every tab shows the engine's
numbers (read from the metrics, tables and figure data), the URL restores the scenario, bad prompts are refused."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.explain import experiments as ex
from core.explain.analysis import ablation_sweep, head_evidence, head_label, next_token_table, patching_table
from core.explain.weights import trained_model
from tests.app.helpers import chart_specs as figures
from tests.app.helpers import numbers as values
from tests.app.helpers import shown, static_tables, table_downloads

ROOT = Path(__file__).resolve().parents[2]
PAGE = str(ROOT / "pages" / "ablation_lab.py")
MODEL = trained_model()
SWEEP = ablation_sweep(MODEL)
TABS = {
    "roads": "① Both roads",
    "prompts": "② Prompt table",
    "subsets": "③ All 16 subsets",
    "patterns": "④ Patterns can mislead",
    "collateral": "⑤ Collateral vs targeted",
    "beyond": "⑥ Beyond the primer",
}
SHORT = {"L1H1": (0, 0), "L1H2": (0, 1), "L2H1": (1, 0), "L2H2": (1, 1)}
RULE, BIGRAM, CLASS = (
    "Rule accuracy (held-out)",
    "Top-1 on 432 bigram slots",
    "Right class on 16 copula slots",
)


def open_page(**params: str | list[str]) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception[0].message if at.exception else ""
    return at


def url_heads(*short: str) -> list[str]:
    """The head selection as the page writes it into the URL (the pills' readable labels)."""
    return [head_label(SHORT[s]) for s in short]


def metrics(at: AppTest) -> dict[str, tuple[str, str]]:
    return {m.label: (m.value, m.delta) for m in at.metric}


def explained(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown if m.value.startswith(("**What you see", "**Why it matters")))


def expected_metrics(removed=(), off=False) -> dict[str, str]:
    i = ex.sweep_index(SWEEP, removed, off)
    return {
        RULE: f"{SWEEP.rule_accuracy[i]:.2f}",
        BIGRAM: f"{SWEEP.bigram_top1[i]:.2f}",
        CLASS: f"{SWEEP.copula_class_accuracy[i]:.2f}",
    }


def shown_metrics(at: AppTest) -> dict[str, str]:
    return {label: value for label, (value, _) in metrics(at).items() if label in (RULE, BIGRAM, CLASS)}


def prediction(at: AppTest) -> str:
    return next(value for label, (value, _) in metrics(at).items() if label.startswith("Next token after"))


# --------------------------------------------------------------------------------------------------- bench
def test_default_is_the_primers_example():
    at = open_page()
    assert at.pills(key="heads").value == ["L1H1"]
    assert at.toggle(key="off").value is False
    assert at.selectbox(key="prompt").value == "<BOS> the cat is"
    assert shown_metrics(at) == expected_metrics([(0, 0)])
    top = next_token_table(MODEL, ex.CAT, ex.configuration([(0, 0)]))[0]
    assert prediction(at) == f"{top[0]} · {top[1]:.2f}"
    base = ex.sweep_index(SWEEP)
    i = ex.sweep_index(SWEEP, [(0, 0)])
    assert metrics(at)[RULE][1] == f"{SWEEP.rule_accuracy[i] - SWEEP.rule_accuracy[base]:+.2f}"
    assert "With L1H1 removed" in explained(at)


@pytest.mark.parametrize(
    "chosen",
    [[], ["L1H2"], ["L2H2"], ["L1H1", "L2H1"], ["L1H2", "L2H1", "L2H2"], ["L1H1", "L1H2", "L2H1", "L2H2"]],
)
def test_toggling_heads_changes_the_metrics(chosen):
    at = open_page()
    before = shown_metrics(at)
    at.pills(key="heads").set_value(chosen).run()
    assert not at.exception
    removed = [SHORT[c] for c in chosen]
    assert shown_metrics(at) == expected_metrics(removed)
    if expected_metrics(removed) != expected_metrics([(0, 0)]):
        assert shown_metrics(at) != before
    top = next_token_table(MODEL, ex.CAT, ex.configuration(removed))[0]
    assert prediction(at) == f"{top[0]} · {top[1]:.2f}"


def test_attention_off_overrides_the_head_selection():
    at = open_page()
    at.toggle(key="off").set_value(True).run()
    assert shown_metrics(at) == expected_metrics(off=True)
    assert any("head selection has no effect" in c.value for c in at.caption)
    assert "With attention off" in explained(at)


def test_the_url_restores_the_scenario():
    at = open_page(heads=["layer 2, head 1", "layer 1, head 2"], prompt="<BOS> the floor was", view=TABS["subsets"])
    assert sorted(at.pills(key="heads").value) == ["L1H2", "L2H1"]
    assert shown_metrics(at) == expected_metrics([(0, 1), (1, 0)])
    top = next_token_table(MODEL, ("<BOS>", "the", "floor", "was"), ex.configuration([(0, 1), (1, 0)]))[0]
    assert prediction(at) == f"{top[0]} · {top[1]:.2f}"
    table = at.dataframe[0].value
    assert table.loc[table["heads removed"] == "L1H2 + L2H1", "marker"].item().endswith("your setting")
    assert shown_metrics(open_page(heads="", off="true")) == expected_metrics(off=True)
    assert shown_metrics(open_page(heads="")) == expected_metrics()


def test_a_link_may_name_heads_by_their_short_keys():
    at = open_page(heads=["L2H1", "layer 1, head 2"])
    assert sorted(at.pills(key="heads").value) == ["L1H2", "L2H1"]
    assert shown_metrics(at) == expected_metrics([(0, 1), (1, 0)])
    assert sorted(at.query_params["heads"]) == url_heads("L1H2", "L2H1")  # rewritten to the form the page writes


def test_a_typed_prompt_runs_and_a_bad_one_is_refused():
    at = open_page()
    at.selectbox(key="prompt").set_value("Type your own…").run()
    at.text_input(key="prompt_text").set_value("the dog sat").run()
    assert not at.exception and not at.error
    top = next_token_table(MODEL, ("<BOS>", "the", "dog", "sat"), ex.configuration([(0, 0)]))[0]
    assert prediction(at) == f"{top[0]} · {top[1]:.2f}"
    for bad in ("the cow is", "the " * 20, "<BOS>", "the <PAD> is"):
        at.text_input(key="prompt_text").set_value(bad).run()
        assert not at.exception
        assert at.error and "cannot be run" in at.error[0].value
        assert prediction(at) == f"{top[0]} · {top[1]:.2f}"  # the last valid prompt is kept


def test_a_typed_prompt_comes_back_from_the_url():
    at = open_page(prompt="Type your own…", prompt_text="the big cat")
    top = next_token_table(MODEL, ("<BOS>", "the", "big", "cat"), ex.configuration([(0, 0)]))[0]
    assert prediction(at) == f"{top[0]} · {top[1]:.2f}"
    assert not at.error
    bad = open_page(prompt="Type your own…", prompt_text="the cow is")  # the link's prompt is named in its notice
    assert bad.warning and "prompt_text** = “the cow is”: unknown token(s) 'cow'" in shown(bad.warning[0].value)
    assert "“the dog was” is used" in shown(bad.warning[0].value)
    assert prediction(bad) == prediction(open_page(prompt="Type your own…"))  # falls back to the box's own example


# --------------------------------------------------------------------------------------------------- tabs
def test_both_roads_shows_the_identities_beside_the_primer():
    at = open_page(view=TABS["roads"])
    header, *rows = static_tables(at)["Identity checks"]
    assert header == ["check", "max |Δ| over the 20 logits (ours, live)", "primer (printed)"]
    ours = [row[1] for row in rows]
    checks = ex.identity_checks(MODEL)
    assert ours == [c.shown for c in checks]
    assert ours[0] == ours[1] == ours[2] == "0 (identical to the last bit)"
    assert [row[2] for row in rows][:4] == ["0 (identical to the last bit)"] * 3 + ["10.995"]
    assert [row[0] for row in rows] == [c.check for c in checks]
    assert any(r"\text{Method 2:}" in element.value for element in at.latex)
    fig = figures(at)[0]
    assert fig["data"][0]["x"] == list(MODEL.vocabulary)
    roads = list(ex.road_logits(MODEL).values())
    for trace, expected in zip(fig["data"], roads, strict=True):
        np.testing.assert_array_equal(values(trace["y"]), expected)
    assert table_downloads(at)["Download identity checks (CSV)"][0] == "ablation-identities.csv"


def test_both_roads_checks_the_w_v_and_self_attention_remarks():
    at = open_page(view=TABS["roads"])
    shown = "\n".join(m.value for m in at.markdown)
    zeroed, kept = ex.value_checks(MODEL)
    literal = ex.weight_only_check(MODEL)
    assert zeroed.identical and not kept.identical and not literal.identical
    # the remark is a slip once the projections carry biases: the box quotes it with the engine's checks
    assert "“So set W_O = 0 (equivalently W_V = 0). Now, no matter what attention pattern" in shown
    assert "Every projection here also carries a bias vector (b_Q, b_K, b_V, b_O, b_1, b_2)" in shown
    assert f"Only {zeroed.check} gives every bit equal" in shown
    assert f"{kept.check}: max |Δ| = {kept.max_abs_delta:.3g}" in shown and "max |Δ| = 9.35" in shown
    assert f"{literal.check}: max |Δ| = {literal.max_abs_delta:.3g}" in shown
    assert "doubles the contribution" in shown
    assert "[0.10, -0.20, 0.05, 0.40, 0.15] and comes out as [0.20, -0.40, 0.10, 0.80, 0.30]: exactly twice" in shown


def test_the_bench_says_what_the_bigram_slots_really_are():
    at = open_page()
    helptext = next(m.help for m in at.metric if m.label == BIGRAM)
    assert "could answer" not in helptext and "need no attention to other tokens" in helptext
    assert "The best any model can do on them is 0.699" in helptext
    assert "its position reaches 0.699, the current token alone only 0.625" in helptext


def test_collateral_tab_points_out_the_primer_s_appendix_a_slips():
    at = open_page(view=TABS["collateral"])
    shown = "\n".join(m.value for m in [*at.markdown, *at.caption])
    assert "Where the primer's text and its numbers disagree" in shown
    assert "after the, five different tokens can follow" in shown
    assert "8 different tokens follow 'the' (big, blue, cat, dog, floor, mat, red, small)" in shown
    # the sentence types are the dashboard's reconstruction, not printed by the primer
    assert "**Checked against:** the dashboard's reconstruction of the toy world's 64 sentence types" in shown
    assert "**Printed:** the toy world" not in shown
    assert "after a sentence's first 'the', 6 (big, cat, dog, floor, mat, small)" in shown
    assert "tops out at 0.625" in shown and "0.699 needs the token's position as well" in shown


def test_prompt_table_puts_the_primers_rows_beside_ours():
    at = open_page(view=TABS["prompts"])
    table = at.dataframe[0].value
    assert len(table) == 12
    row = table[(table["prompt"] == "<BOS> the cat is") & (table["attention"] == "on, layer 1 head 1 removed")]
    assert row["primer"].item() == "the · 0.989 · 0.000"
    mine = ex.prompt_row(MODEL, ex.CAT, [(0, 0)])
    assert row["top token"].item() == mine.top_token and row["its probability"].item() == round(mine.probability, 3)
    assert (table["primer"] == "—").sum() == 12 - 5
    off = table[(table["prompt"] == "<BOS> the mat is") & (table["attention"] == "off (W_O = 0)")]
    assert off["primer"].item() == "sat · 0.629 · 0.000"


def test_subset_table_highlights_best_and_worst_and_follows_the_toggle():
    at = open_page(view=TABS["subsets"], heads=url_heads("L2H2"))
    table = at.dataframe[0].value
    assert len(table) == 17
    expected = ex.subset_table(SWEEP)
    best = next(r["heads removed"] for r in expected if r["marker"] == "best")
    worst = next(r["heads removed"] for r in expected if r["marker"] == "worst")
    markers = dict(zip(table["heads removed"], table["marker"], strict=True))
    assert markers[best].startswith("best") and markers[worst].startswith("worst")
    assert "your setting" in markers["L2H2"]
    np.testing.assert_array_equal(table["rule accuracy (held-out)"].to_numpy(), SWEEP.rule_accuracy)
    at.pills(key="heads").set_value(["L1H1", "L2H2"]).run()
    markers = dict(zip(at.dataframe[0].value["heads removed"], at.dataframe[0].value["marker"], strict=True))
    assert "your setting" in markers["L1H1 + L2H2"] and "your setting" not in markers["L2H2"]


def test_subset_table_shows_the_primer_s_single_head_column_beside_ours():
    at = open_page(view=TABS["subsets"])
    table = at.dataframe[0].value
    primer = dict(zip(table["heads removed"], table["primer: rule accuracy (printed)"], strict=True))
    assert [primer[k] for k in ("none", "L1H1", "L1H2", "L2H1", "L2H2")] == ["1.00", "0.00", "0.00", "0.60", "0.60"]
    assert sum(v != "—" for v in primer.values()) == 5 and primer["attention off"] == "—"
    text = explained(at)
    assert "1.00 (none), 0.00 (L1H1), 0.00 (L1H2), 0.60 (L2H1), 0.60 (L2H2) on its model" in text
    ours = ", ".join(
        f"{SWEEP.rule_accuracy[ex.sweep_index(SWEEP, h)]:.2f}" for h in ([], [(0, 0)], [(0, 1)], [(1, 0)], [(1, 1)])
    )
    assert f"{ours} on ours" in text


def row_styles(table) -> dict[int, str]:
    """The subset table's row styles as the browser receives them (pandas Styler CSS: '#T_<uuid>_row<i>_col<j>')."""
    styles: dict[int, set[str]] = {}
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", table.proto.arrow_data.styler.styles):
        for row in re.findall(r"_row(\d+)_col\d+", selectors):
            styles.setdefault(int(row), set()).update(part.strip() for part in body.split(";") if part.strip())
    return {row: "; ".join(sorted(parts)) for row, parts in styles.items()}


@pytest.mark.parametrize("chosen", [["L2H2"], ["L1H1", "L1H2"], []])
def test_subset_table_colours_best_green_worst_red_and_the_readers_row_bold(chosen):
    at = open_page(view=TABS["subsets"], heads=url_heads(*chosen) or "")  # "": nothing removed
    expected = ex.subset_table(SWEEP)
    best = next(i for i, r in enumerate(expected) if r["marker"] == "best")
    worst = next(i for i, r in enumerate(expected) if r["marker"] == "worst")
    mine = ex.sweep_index(SWEEP, [SHORT[c] for c in chosen])
    want: dict[int, list[str]] = {}
    want.setdefault(best, []).append("background-color: #dcefd8")
    want.setdefault(worst, []).append("background-color: #f6d5d1")
    want.setdefault(mine, []).append("font-weight: bold")
    assert row_styles(at.dataframe[0]) == {row: "; ".join(sorted(parts)) for row, parts in want.items()}


def test_patterns_tab_puts_brightness_next_to_damage():
    at = open_page(view=TABS["patterns"])
    demo, paired = figures(at)
    weights = ex.query_attention(MODEL, ex.CAT)
    np.testing.assert_allclose(values(demo["data"][0]["z"]), weights)
    evidence = head_evidence(SWEEP)
    np.testing.assert_allclose(values(paired["data"][0]["x"]), evidence.attention)
    np.testing.assert_allclose(values(paired["data"][1]["x"]), evidence.rule_drop)
    np.testing.assert_allclose(values(paired["data"][2]["x"]), evidence.bigram_drop)
    verdict = "is" if evidence.brightest_is_load_bearing else "is not"
    family = ex.shipped_family()
    runs, agree = len(family.carriers), family.brightest_load_bearing
    lead = f"#### Across {runs} trained models, the brightest head is load-bearing in only {agree}."
    # the finding the heading leads with, under the page's one definition (rule accuracy ≤ 0.2 once removed): the
    # shipped model and seeds 3 and 8 (it read 2 under an earlier test that also disagreed with seed 2's own row)
    assert (runs, agree) == (9, 3)
    headings = [m.value for m in at.markdown if m.value.startswith("####")]
    assert headings[0] == lead
    assert at.markdown[[m.value for m in at.markdown].index(lead) + 1].value.startswith(
        f"In the shipped model, drawn below, it {verdict}; the other 8 runs are under "
        "⑥ Beyond the primer → Model family. The brightest head is the one that puts most of the copula's attention "
        "on the subject noun; load-bearing: removing that head alone leaves held-out rule accuracy at 0.2 or less"
    )
    first_chart = next(i for i, m in enumerate(at.markdown) if m.value.startswith("**What a demo shows:**"))
    assert [m.value for m in at.markdown].index(lead) < first_chart  # the finding leads the tab
    assert head_label(evidence.brightest) in explained(at)


def test_patterns_tab_quotes_the_primer_s_larger_model_findings():
    at = open_page(view=TABS["patterns"])
    table = at.table[0].value.reset_index()
    printed = table["primer (printed)"].tolist()
    assert printed[0] == "p(right token) 0.999 → 0.0005"
    assert printed[1] == "p(right token) stays 0.999"
    assert printed[2] == "largest single effect: rule accuracy 0.860"
    assert "each of the 8 heads" in table["finding"][2]
    counts = ex.shipped_family().verdict_counts
    assert table.iloc[0, 2] == f"the rule rests on one head in {counts['one head']}"


def test_patterns_heatmap_follows_the_prompt():
    at = open_page(view=TABS["patterns"], prompt="<BOS> the dog was")
    demo = figures(at)[0]
    assert demo["data"][0]["x"] == ["<BOS>", "the", "dog", "was"]
    weights = ex.query_attention(MODEL, ("<BOS>", "the", "dog", "was"))
    np.testing.assert_allclose(values(demo["data"][0]["z"]), weights)


def test_collateral_tab_has_both_metrics_and_the_primers_markers():
    at = open_page(view=TABS["collateral"], heads=url_heads("L1H1", "L2H1"))
    fig = figures(at)[0]
    categories = fig["data"][0]["x"]
    assert categories == ["none", "L1H1", "L1H2", "L2H1", "L2H2", "L1H1 + L2H1", "attention off"]
    index = [SWEEP.labels.index(c) for c in categories]
    np.testing.assert_allclose(values(fig["data"][0]["y"]), SWEEP.bigram_top1[index])
    np.testing.assert_allclose(values(fig["data"][1]["y"]), SWEEP.copula_class_accuracy[index])
    primer_bigram = values(fig["data"][2]["y"])
    np.testing.assert_allclose(primer_bigram[[0, 1, 2, 3, 4, 6]], [0.699, 0.417, 0.431, 0.662, 0.690, 0.250])
    assert np.isnan(primer_bigram[5])  # the primer printed no pair
    header, *rows = static_tables(at)["Collateral vs targeted"]
    assert header[0] == "configuration" and [row[0] for row in rows] == categories
    assert rows[1][1:3] == [f"{SWEEP.bigram_top1[index[1]]:.3f}", "0.417"]  # ours and the primer's, 3 decimals
    assert rows[5][2] == rows[5][4] == "—"  # no printed value for the pair
    at.pills(key="heads").set_value(["L2H2"]).run()
    assert figures(at)[0]["data"][0]["x"] == ["none", "L1H1", "L1H2", "L2H1", "L2H2", "attention off"]


def test_beyond_zero_vs_mean():
    at = open_page(view=TABS["beyond"], beyond="Zero vs mean ablation")
    fig = figures(at)[0]
    rows = ex.zero_vs_mean(MODEL)
    np.testing.assert_allclose(values(fig["data"][1]["y"]), [r["right class on copula slots, mean"] for r in rows])
    assert "zero" in explained(at)


def test_beyond_mean_ablation_follows_the_chosen_subset():
    at = open_page(view=TABS["beyond"], beyond="Zero vs mean ablation", heads=url_heads("L1H1", "L2H1"))
    fig = figures(at)[0]
    rows = ex.zero_vs_mean(MODEL, [(0, 0), (1, 0)])
    assert fig["data"][0]["x"] == ["L1H1", "L1H2", "L2H1", "L2H2", "L1H1 + L2H1", "all four heads"]
    np.testing.assert_allclose(values(fig["data"][1]["y"]), [r["right class on copula slots, mean"] for r in rows])
    assert at.dataframe[0].value["heads removed"].tolist() == fig["data"][0]["x"]


def test_beyond_neurons_zero_and_mean():
    at = open_page(view=TABS["beyond"], beyond="MLP neurons")
    zero = ex.neuron_report(MODEL, "zero")
    z = values(figures(at)[0]["data"][0]["z"])
    np.testing.assert_allclose(z, zero.class_accuracy)
    assert ex.neuron_label(zero.needed[0]) in explained(at)
    at.radio(key="neuron_mode").set_value("mean").run()
    mean = ex.neuron_report(MODEL, "mean")
    z = values(figures(at)[0]["data"][0]["z"])
    np.testing.assert_allclose(z, mean.class_accuracy)


def test_beyond_patching_and_a_same_class_pair():
    at = open_page(view=TABS["beyond"], beyond="Activation patching")
    table = at.dataframe[0].value
    rows = patching_table(MODEL, ex.MAT, ex.CAT)
    assert table["answer flipped"].tolist() == ["yes" if r.flipped else "no" for r in rows]
    np.testing.assert_allclose(values(figures(at)[0]["data"][0]["y"]), [r.p_source_class for r in rows])
    at.selectbox(key="patch_source").set_value("<BOS> the floor is").run()
    assert not at.exception and at.warning and "other class" in at.warning[0].value


def test_beyond_family_small_multiples():
    at = open_page(view=TABS["beyond"], beyond="Model family")
    fig = figures(at)[0]
    panels = [trace for trace in fig["data"] if trace["type"] == "bar"]
    table = at.dataframe[0].value
    assert len(panels) == len(table) >= 2
    np.testing.assert_allclose(values(panels[0]["y"]), head_evidence(SWEEP).rule_drop)
    assert set(table["rule rests on"]) <= {"one head", "several heads", "no single head"}
    assert "training runs" in fig["layout"]["title"]["text"]


def test_every_tab_explains_itself_from_live_numbers():
    for view in TABS.values():
        at = open_page(view=view)
        assert explained(at).count("**What you see") == 2, view  # the bench and the tab
