"""Appendix A's experiment bench (core/explain/experiments.py): identities with ==, the subset table, patching and mean
ablation properties, the brightness/damage summary, the prompt table and the primer's printed tables."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from core.explain import experiments as ex
from core.explain.analysis import (
    COLLAPSE,
    SubsetCounts,
    Sweep,
    ablation_sweep,
    head_evidence,
    head_subsets,
    heads,
    mean_ablation,
    patch_heads,
    patching_table,
    rule_carriers,
    score_slots,
    subset_counts,
)
from core.explain.transformer import NO_INTERVENTION, Intervention, forward
from core.explain.weights import trained_model
from core.explain.world import corpus

MODEL = trained_model()
HEADS = heads(MODEL.config)


@pytest.fixture(scope="module")
def sweep():
    return ablation_sweep(MODEL)


def logits(model, words, intervention=NO_INTERVENTION):
    return forward(model, model.encode(words), intervention=intervention)["hook_logits"]


# ------------------------------------------------------------------------------------------------ identities
def test_method2_equals_method1_to_the_last_bit():
    fabricated = ex.attention_zeroed(MODEL)
    assert np.array_equal(logits(fabricated, ex.CAT), logits(MODEL, ex.CAT, Intervention(attention="deleted")))
    assert np.array_equal(logits(fabricated, ex.CAT), logits(MODEL, ex.CAT, Intervention(attention="off")))
    # the fabricated model really has W_O = b_O = 0 and nothing else changed
    for name, value in fabricated.params.items():
        if ".attn.W_O" in name or ".attn.b_O" in name:
            assert not value.any()
        else:
            assert value is not MODEL.params[name] and np.array_equal(value, MODEL.params[name])


@pytest.mark.parametrize("head", HEADS)
def test_zeroed_rows_equal_the_engines_head_ablation(head):
    by_weights = logits(ex.head_rows_zeroed(MODEL, head), ex.CAT)
    by_routine = logits(MODEL, ex.CAT, ex.configuration([head]))
    assert np.array_equal(by_weights, by_routine)
    assert not np.array_equal(by_routine, logits(MODEL, ex.CAT))  # the head does something


def test_identity_checks_as_the_primer_prints_them():
    checks = {c.key: c for c in ex.identity_checks(MODEL)}
    for key in ("method2_vs_method1", "head_rows_vs_routine", "swap_attention_off", "method2_vs_method1_corpus"):
        assert checks[key].identical and checks[key].max_abs_delta == 0.0
        assert checks[key].shown == "0 (identical to the last bit)"
    on = checks["swap_attention_on"]
    assert not on.identical and on.max_abs_delta > 1.0
    assert on.max_abs_delta == np.max(np.abs(logits(MODEL, ex.CAT)[-1] - logits(MODEL, ex.MAT)[-1]))
    assert on.shown == f"{on.max_abs_delta:.3f}"


def test_a_check_that_fails_is_reported_as_a_difference():
    check = ex._compare("k", "c", np.array([1.0, 2.0]), np.array([1.0, 2.5]))
    assert not check.identical and check.max_abs_delta == 0.5 and check.shown == "0.500"


# ------------------------------------------------------------------------------------------------ subset table
def test_subset_table_structure(sweep):
    rows = ex.subset_table(sweep)
    subsets = [r for r in rows if r["heads removed"] != "attention off"]
    assert len(subsets) == 16 and len(rows) == 17
    assert len({r["heads removed"] for r in subsets}) == 16
    assert [r["heads removed (count)"] for r in subsets] == [len(s) for s in head_subsets(MODEL.config)]
    for row in rows:
        for key in ("rule accuracy (held-out)", "top-1 on bigram slots", "right class on copula slots"):
            assert 0.0 <= row[key] <= 1.0
        fifths = row["rule accuracy (held-out)"] * 5
        assert fifths == pytest.approx(round(fifths), abs=1e-12)
    assert sweep.n_held_out_copula_slots == 5 and sweep.n_copula_slots == 16 and sweep.n_bigram_slots == 432


def test_best_and_worst_are_the_extremes_among_real_ablations(sweep):
    rows = ex.subset_table(sweep)
    markers = [r["marker"] for r in rows]
    assert markers.count("best") == 1 and markers.count("worst") == 1
    assert markers[0] == "" and markers[-1] == ""  # neither the trained model nor attention off is a candidate
    real = rows[1:16]
    key = lambda r: (r["rule accuracy (held-out)"], r["right class on copula slots"], r["top-1 on bigram slots"])  # noqa: E731
    assert key(next(r for r in rows if r["marker"] == "best")) == max(map(key, real))
    assert key(next(r for r in rows if r["marker"] == "worst")) == min(map(key, real))


def test_sweep_index_finds_each_setting(sweep):
    assert sweep.removed[ex.sweep_index(sweep)] == frozenset()
    assert sweep.removed[ex.sweep_index(sweep, attention_off=True)] is None
    assert sweep.removed[ex.sweep_index(sweep, [HEADS[3], HEADS[0]])] == frozenset({HEADS[0], HEADS[3]})


def test_bench_reading_against_the_trained_model(sweep):
    reading = ex.bench_reading(sweep, [HEADS[0]])
    scores, trained = score_slots(MODEL, intervention=ex.configuration([HEADS[0]])), score_slots(MODEL)
    assert reading.changed and reading.right_class_slots == int(scores.right_class.sum())
    assert (reading.rule_accuracy.now, reading.rule_accuracy.trained) == (scores.rule_accuracy, trained.rule_accuracy)
    assert reading.bigram_top1.change == scores.bigram_top1 - trained.bigram_top1 < 0
    same = ex.bench_reading(sweep)
    assert not same.changed and same.copula_class_accuracy.change == 0.0
    assert ex.bench_reading(sweep, attention_off=True).right_class_slots == 0


def test_sweep_row_matches_a_separate_scoring_run(sweep):
    for removed in ((), (HEADS[0],), (HEADS[1], HEADS[2])):
        scores = score_slots(MODEL, intervention=ex.configuration(removed))
        i = ex.sweep_index(sweep, removed)
        assert sweep.rule_accuracy[i] == scores.rule_accuracy
        assert sweep.bigram_top1[i] == scores.bigram_top1


# ------------------------------------------------------------------------------------------------ patching, mean
@pytest.mark.parametrize("head", HEADS)
def test_patching_a_head_with_its_own_activation_changes_nothing(head):
    ids = MODEL.encode(ex.CAT)
    clean = forward(MODEL, ids)
    _, patched = patch_heads(MODEL, ids, ids, [head])
    for name in ("hook_logits", "blocks.1.hook_resid_post", f"blocks.{head[0]}.attn.hook_z"):
        assert np.array_equal(patched[name], clean[name])


@pytest.mark.parametrize("head", HEADS)
def test_mean_ablation_with_a_constant_equals_zero_ablation_plus_that_constant(head):
    layer, index = head
    d = MODEL.config.d_head
    ids = MODEL.encode(ex.CAT)
    rows = MODEL.params[f"blocks.{layer}.attn.W_O"][index * d : (index + 1) * d]
    zeroed = forward(MODEL, ids, intervention=ex.configuration([head]))
    out = f"blocks.{layer}.hook_attn_out"
    assert np.array_equal(forward(MODEL, ids, intervention=Intervention(head_outputs={head: 0.0}))[out], zeroed[out])
    constant = np.array([0.7, -1.3, 2.1])
    replaced = forward(MODEL, ids, intervention=Intervention(head_outputs={head: constant}))
    np.testing.assert_allclose(replaced[out], zeroed[out] + constant @ rows, rtol=0, atol=1e-12)
    assert not np.allclose(replaced[out], zeroed[out])


def test_zero_vs_mean_rows():
    rows = ex.zero_vs_mean(MODEL)
    assert [r["heads removed"] for r in rows] == ["L1H1", "L1H2", "L2H1", "L2H2", "all four heads"]
    first = score_slots(MODEL, intervention=ex.configuration([HEADS[0]]))
    assert rows[0]["rule accuracy, zero"] == first.rule_accuracy
    for row in rows:
        assert all(0.0 <= v <= 1.0 for k, v in row.items() if k != "heads removed")


def test_zero_vs_mean_adds_the_chosen_subset():
    pair = [HEADS[2], HEADS[0]]
    rows = ex.zero_vs_mean(MODEL, pair)
    assert [r["heads removed"] for r in rows] == ["L1H1", "L1H2", "L2H1", "L2H2", "L1H1 + L2H1", "all four heads"]
    mean = score_slots(MODEL, intervention=mean_ablation(MODEL, sorted(pair)))
    assert rows[4]["right class on copula slots, mean"] == mean.copula_class_accuracy
    assert rows[4]["rule accuracy, zero"] == score_slots(MODEL, intervention=ex.configuration(pair)).rule_accuracy
    for single_or_all in ([HEADS[1]], list(HEADS), []):  # already a row, or nothing to add
        assert len(ex.zero_vs_mean(MODEL, single_or_all)) == len(HEADS) + 1


def test_method_gap_counts_agreement_and_finds_the_largest_difference():
    rows = [
        {"right class on copula slots, zero": z, "right class on copula slots, mean": m}
        for z, m in ((0.5, 0.5), (0.0, 0.25), (1.0, 0.5), (0.75, 0.75))
    ]
    gap = ex.method_gap(rows)
    assert gap.agree == 2 and gap.largest == 2


def test_patching_table_flips_only_toward_the_source_class():
    rows = patching_table(MODEL, ex.MAT, ex.CAT)
    assert rows[0].patched == "none (clean run)" and not rows[0].flipped
    assert [r.patched for r in rows[1:]] == [
        "L1H1",
        "L1H2",
        "L2H1",
        "L2H2",
        "L1H1 + L1H2",
        "L2H1 + L2H2",
        "all four heads",
    ]
    assert rows[0].top_token in ("red", "blue")
    everything = rows[-1]  # all heads patched at every position: the last position is the source run's
    source = forward(MODEL, MODEL.encode(ex.CAT))["hook_probs"][-1]
    assert everything.probability == source.max() and everything.flipped
    for row in rows:
        assert row.flipped == (row.top_token in ("big", "small"))
        assert 0.0 <= row.p_source_class <= 1.0 and 0.0 <= row.p_target_class <= 1.0
    with pytest.raises(ValueError, match="other class"):
        patching_table(MODEL, ("<BOS>", "the", "dog", "is"), ex.CAT)


# ------------------------------------------------------------------------------------------------ evidence, family
def test_head_evidence_reads_the_sweep(sweep):
    evidence = head_evidence(sweep)
    assert evidence.heads == HEADS
    base = ex.sweep_index(sweep)
    for k, head in enumerate(HEADS):
        i = ex.sweep_index(sweep, [head])
        assert evidence.rule_drop[k] == sweep.rule_accuracy[base] - sweep.rule_accuracy[i]
        assert evidence.attention[k] == sweep.attention_on_subject[base][head]
    assert evidence.brightest == HEADS[int(np.argmax(evidence.attention))]
    worst = min(range(4), key=lambda k: (evidence.rule_accuracy[k], evidence.class_accuracy[k]))
    assert evidence.most_damaging == HEADS[worst]
    # one definition of load-bearing: removing the head alone leaves rule accuracy ≤ COLLAPSE
    assert evidence.load_bearing == tuple(h for k, h in enumerate(HEADS) if evidence.rule_accuracy[k] <= COLLAPSE)
    assert evidence.brightest_is_load_bearing == (evidence.brightest in evidence.load_bearing)


def fake_sweep(single_head_rule: list[float], attention: list[float]) -> Sweep:
    """A sweep with chosen single-head rule accuracies and attention (other rows: the trained model's values)."""
    real = ablation_sweep(MODEL)
    rule = real.rule_accuracy.copy()
    rule[ex.sweep_index(real)] = 1.0
    for head, value in zip(HEADS, single_head_rule, strict=True):
        rule[ex.sweep_index(real, [head])] = value
    on_subject = real.attention_on_subject.copy()
    on_subject[ex.sweep_index(real)] = np.reshape(attention, (2, 2))
    return replace(real, rule_accuracy=rule, attention_on_subject=on_subject)


@pytest.mark.parametrize(
    ("rule", "verdict", "collapsing"),
    [
        ([1.0, 0.0, 0.8, 0.6], "one head", [(0, 1)]),
        ([0.2, 0.0, 0.8, 0.6], "several heads", [(0, 0), (0, 1)]),
        ([0.8, 0.6, 0.4, 1.0], "no single head", []),
    ],
)
def test_rule_carriers_verdicts(rule, verdict, collapsing):
    carriers = rule_carriers(fake_sweep(rule, [0.1, 0.2, 0.9, 0.3]))
    assert carriers.verdict == verdict and list(carriers.collapsing) == collapsing
    assert carriers.weakest_survivor == min(rule)


def test_brightest_is_not_load_bearing_when_the_damage_is_elsewhere():
    evidence = head_evidence(fake_sweep([1.0, 0.0, 0.8, 0.6], [0.1, 0.2, 0.9, 0.3]))
    assert evidence.brightest == (1, 0) and evidence.most_damaging == (0, 1) and evidence.load_bearing == ((0, 1),)
    assert not evidence.brightest_is_load_bearing and evidence.dimmest == (0, 0)
    evidence = head_evidence(fake_sweep([1.0, 0.0, 0.8, 0.6], [0.1, 0.95, 0.9, 0.3]))
    assert evidence.brightest_is_load_bearing


def test_bluntest_and_cleanest_are_read_from_the_bigram_damage(sweep):
    bigram = sweep.bigram_top1.copy()
    for head, value in zip(HEADS, [0.6, 0.2, 0.69, 0.5], strict=True):
        bigram[ex.sweep_index(sweep, [head])] = value
    bigram[ex.sweep_index(sweep)] = 0.7
    evidence = head_evidence(replace(sweep, bigram_top1=bigram))
    assert evidence.bluntest == HEADS[1] and evidence.cleanest == HEADS[2]


def test_subset_counts_count_collapses_among_real_ablations_and_pairs(sweep):
    rule = np.ones(len(sweep.removed))
    for i, removed in enumerate(sweep.removed):
        if removed is None or len(removed) == 2 or removed == frozenset({HEADS[0]}):
            rule[i] = 0.0  # attention off is not a head subset and must not be counted
    counts = subset_counts(replace(sweep, rule_accuracy=rule))
    assert counts == SubsetCounts(real=15, collapsing=7, pairs=6, collapsing_pairs=6)


def test_the_family_counts_the_brightest_head_as_load_bearing_under_the_collapse_definition():
    """Seed 2's rule rests on no single head, so its brightest head is not load-bearing; in seeds 3 and 8 removing the
    brightest head takes the rule to 0.2 and 0.0, so it is. Under the one definition: 3 of 9."""
    family = ex.shipped_family()
    for carriers in family.carriers:
        ev = carriers.evidence
        assert ev.brightest_is_load_bearing == (ev.rule_accuracy[ev.index(ev.brightest)] <= COLLAPSE)
        assert ev.load_bearing == carriers.collapsing
    by_seed = dict(zip(family.seeds, family.carriers, strict=True))
    assert not by_seed[2].evidence.brightest_is_load_bearing and by_seed[2].verdict == "no single head"
    assert by_seed[3].evidence.brightest_is_load_bearing and by_seed[8].evidence.brightest_is_load_bearing
    assert (len(family.carriers), family.brightest_load_bearing) == (9, 3)


def test_family_summaries():
    one = rule_carriers(fake_sweep([1.0, 0.0, 0.8, 0.6], [0.1, 0.95, 0.9, 0.3]))  # brightest is load-bearing
    none = rule_carriers(fake_sweep([0.8, 0.6, 0.4, 1.0], [0.1, 0.2, 0.3, 0.9]))  # brightest is not
    family = ex.Family(seeds=(0, 1, 2), carriers=(one, none, one))
    assert family.verdict_counts == {"one head": 2, "several heads": 0, "no single head": 1}
    assert family.distinct_answers == 2 and family.brightest_load_bearing == 2


def test_shipped_family_is_computed_once_and_starts_with_the_shipped_model(sweep):
    family = ex.shipped_family()
    assert ex.shipped_family() is family
    assert len(family.seeds) == len(family.carriers) >= 2
    shipped = rule_carriers(sweep)
    assert family.carriers[0].collapsing == shipped.collapsing
    assert np.array_equal(family.carriers[0].evidence.rule_accuracy, shipped.evidence.rule_accuracy)


def test_rule_carriers_of_the_trained_model(sweep):
    carriers = rule_carriers(sweep)
    collapsed = [h for h, acc in zip(HEADS, carriers.evidence.rule_accuracy, strict=True) if acc <= COLLAPSE]
    assert list(carriers.collapsing) == collapsed


def test_neuron_report_lists_the_neurons_that_cost_copula_decisions():
    report = ex.neuron_report(MODEL, "zero")
    assert report.class_accuracy.shape == (MODEL.config.n_layers, MODEL.config.d_ff)
    expected = {tuple(map(int, i)) for i in np.argwhere(report.class_accuracy < report.baseline_class)}
    assert set(report.needed) == expected
    assert report.needed, "the trained model's rule needs at least one MLP neuron"
    assert report.class_accuracy[report.needed[0]] == report.class_accuracy.min()
    layer, neuron = report.needed[0]
    scores = score_slots(MODEL, intervention=Intervention(neurons={(layer, neuron): 0.0}))
    assert scores.copula_class_accuracy == report.class_accuracy[layer, neuron]


# ------------------------------------------------------------------------------------------------ prompts
def test_prompt_table_rows_come_from_the_forward_pass():
    rows = {(r.prompt, r.configuration): r for r in ex.prompt_table(MODEL)}
    assert len(rows) == 2 * (2 + len(HEADS))
    probs = forward(MODEL, MODEL.encode(ex.CAT))["hook_probs"][-1]
    on = rows[" ".join(ex.CAT), ex.ON]
    assert on.top_token == MODEL.vocabulary[int(probs.argmax())] and on.probability == probs.max()
    big, small = MODEL.vocabulary.index("big"), MODEL.vocabulary.index("small")
    assert on.p_big_small == pytest.approx(probs[big] + probs[small], abs=1e-15)
    off_cat, off_mat = rows[" ".join(ex.CAT), ex.OFF], rows[" ".join(ex.MAT), ex.OFF]
    assert (off_cat.top_token, off_cat.probability) == (off_mat.top_token, off_mat.probability)
    assert ex.configuration_label([(0, 0)]) == "on, layer 1 head 1 removed"


def test_parse_prompt_accepts_words_and_refuses_bad_input():
    assert ex.parse_prompt(MODEL, "the cat is") == ex.CAT
    assert ex.parse_prompt(MODEL, "  <BOS>  the mat is ") == ex.MAT
    for bad, reason in (
        ("", "at least one word"),
        ("the cow is", "unknown token"),
        ("the " * 20, "at most"),
        ("the <BOS> cat", "cannot appear"),
    ):
        with pytest.raises(ValueError, match=reason):
            ex.parse_prompt(MODEL, bad)


def test_query_attention_is_the_last_row_of_each_pattern():
    weights = ex.query_attention(MODEL, ex.CAT)
    trace = forward(MODEL, MODEL.encode(ex.CAT))
    assert weights.shape == (4, 4)
    assert np.array_equal(weights[1], trace["blocks.0.attn.hook_pattern"][1, -1])
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)


# ------------------------------------------------------------------------------------------------ the primer's tables
def test_primer_tables_match_the_asset_and_the_printed_text():
    tables = ex.primer_tables()
    doc = json.loads(ex.ASSET.read_text(encoding="utf-8"))
    assert "primer's printed text" in doc["note"]
    assert tables.identity["swap_attention_on"]["value"] == 10.995
    assert tables.single_head_rule == {
        frozenset(): 1.0,
        frozenset({(0, 0)}): 0.0,
        frozenset({(0, 1)}): 0.0,
        frozenset({(1, 0)}): 0.6,
        frozenset({(1, 1)}): 0.6,
    }
    assert tables.collateral[None] == (0.25, 0.0) and tables.collateral[frozenset({(0, 0)})] == (0.417, 0.0)
    assert tables.brightest("cat") == (1, 0)  # the primer: 0.633 in layer 2, head 1
    assert [r["top_token"] for r in tables.prompt_rows] == ["big", "red", "sat", "sat", "the"]
    # the prompt table's configurations use the same wording as ours, so the two can be joined
    ours = {r.configuration for r in ex.prompt_table(MODEL)}
    assert {r["configuration"] for r in tables.prompt_rows} <= ours
    # the checks the primer prints are the ones we compute
    assert set(tables.identity) <= {c.key for c in ex.identity_checks(MODEL)}


def test_copula_prompts_are_the_worlds_copula_prefixes():
    data = corpus()
    prefixes = {
        tuple(data.types[s].tokens[: p + 1])
        for s, p, c in zip(data.slot_sentence, data.slot_position, data.slot_copula, strict=True)
        if c
    }
    assert set(ex.COPULA_PROMPTS) == prefixes


def test_road_logits_picture_the_identity():
    roads = list(ex.road_logits(MODEL).values())
    assert len(roads) == 4 and all(r.shape == (MODEL.config.vocab_size,) for r in roads)
    on, method1, method2, swapped = roads
    assert np.array_equal(method1, method2) and np.array_equal(method2, swapped)
    assert not np.array_equal(on, method1)
    assert np.array_equal(on, logits(MODEL, ex.CAT)[-1])
