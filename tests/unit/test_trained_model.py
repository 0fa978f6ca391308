"""What the shipped trained model must show (issue 3), and that the JSON asset is the model it claims to be."""

import json

import numpy as np
import pytest

from core.explain.analysis import heads, score_slots
from core.explain.transformer import NO_INTERVENTION, PRIMER_CONFIG, Intervention, Model, forward, zero_head_rows
from core.explain.weights import MAIN, family, load, trained_model, training_log
from core.explain.world import NOUN_CLASS, corpus, corpus_hash, sentence_types, training_corpus

COPULA_TYPES = [t for t in sentence_types() if t.family == "copula"]


@pytest.fixture(scope="module")
def model():
    return trained_model()


def last_logits(model, words, intervention=NO_INTERVENTION):
    return forward(model, model.encode(words), intervention=intervention)["hook_logits"][-1]


def test_asset_is_the_primer_shape_with_its_training_record(model):
    assert model.config == PRIMER_CONFIG
    assert model.n_params == 736
    meta = model.metadata
    assert {"seed", "steps", "final_loss", "corpus_hash"} <= set(meta)
    assert meta["corpus_hash"] == corpus_hash()
    assert meta["training_seconds"] <= 60  # the recorded training time (bench/ measures, tests never time)
    doc = json.loads(MAIN.read_text(encoding="utf-8"))
    assert list(doc["parameters"]) == list(model.params)  # primer symbols, primer order
    assert doc["n_params"] == 736


def test_final_loss_in_the_file_is_the_loss_of_the_shipped_weights(model):
    data = training_corpus()
    probs = forward(model, data.ids, lengths=data.lengths)["hook_probs"][data.slot_sentence, data.slot_position]
    loss = -np.log(probs[np.arange(data.n_slots), data.slot_target]).mean()
    assert loss == pytest.approx(model.metadata["final_loss"], abs=1e-12)


def test_p_on_after_the_cat_sat(model):
    probs = forward(model, model.encode(["<BOS>", "the", "cat", "sat"]))["hook_probs"][-1]
    assert probs[model.vocabulary.index("on")] >= 0.99


@pytest.mark.parametrize("sentence", COPULA_TYPES, ids=lambda t: t.text + (" (held out)" if t.held_out else ""))
def test_copula_rule_on_all_sixteen_types(model, sentence):
    prompt = list(sentence.tokens[: sentence.tokens.index(sentence.words[2]) + 1])  # <BOS> the noun is/was
    probs = forward(model, model.encode(prompt))["hook_probs"][-1]
    adjectives = [model.vocabulary.index(a) for a in ("big", "small", "red", "blue")]
    wanted = [
        model.vocabulary.index(a)
        for a in {"animal": ("big", "small"), "surface": ("red", "blue")}[NOUN_CLASS[sentence.subject]]
    ]
    assert int(np.argmax(probs)) in wanted
    assert probs[wanted].sum() >= 0.90
    assert set(wanted) < set(adjectives)


def test_method_2_equals_method_1_to_the_last_bit(model):
    for words in (["<BOS>", "the", "cat", "is"], ["<BOS>", "the", "mat", "was"]):
        off = last_logits(model, words, Intervention(attention="off"))
        deleted = last_logits(model, words, Intervention(attention="deleted"))
        assert np.array_equal(off, deleted)
    data = corpus()
    off = forward(model, data.ids, lengths=data.lengths, intervention=Intervention(attention="off"))["hook_logits"]
    deleted = forward(model, data.ids, lengths=data.lengths, intervention=Intervention(attention="deleted"))
    assert np.array_equal(off, deleted["hook_logits"])


@pytest.mark.parametrize("head", heads(PRIMER_CONFIG), ids=lambda h: f"L{h[0] + 1}H{h[1] + 1}")
def test_head_rows_zeroed_by_hand_equal_the_engines_ablation(model, head):
    layer, index = head
    params = dict(model.params)
    W_O = np.array(params[f"blocks.{layer}.attn.W_O"])
    W_O[3 * index : 3 * index + 3, :] = 0.0  # the head's three rows, written out by hand
    by_hand = Model(config=model.config, params=params | {f"blocks.{layer}.attn.W_O": W_O}, vocabulary=model.vocabulary)
    data = corpus()
    expected = forward(by_hand, data.ids, lengths=data.lengths)["hook_logits"]
    engine = forward(model, data.ids, lengths=data.lengths, intervention=Intervention(zero_heads=frozenset({head})))
    assert np.array_equal(expected, engine["hook_logits"])
    assert np.array_equal(zero_head_rows(model.params[f"blocks.{layer}.attn.W_O"], [index], 3), W_O)
    assert not np.array_equal(expected, forward(model, data.ids, lengths=data.lengths)["hook_logits"])


def test_attention_off_cannot_tell_cat_from_mat_attention_on_can(model):
    cat, mat = ["<BOS>", "the", "cat", "is"], ["<BOS>", "the", "mat", "is"]
    off = Intervention(attention="off")
    assert np.array_equal(last_logits(model, cat, off), last_logits(model, mat, off))
    difference = np.abs(last_logits(model, cat) - last_logits(model, mat)).max()
    assert difference > 1.0


def test_held_out_rule_accuracy_of_the_trained_model(model):
    scores = score_slots(model)
    assert scores.rule_accuracy == 1.0
    assert scores.copula_class_accuracy == 1.0
    assert np.nanmin(scores.class_mass) >= 0.90


def test_training_log_matches_the_model(model):
    log = training_log(model)
    assert log["seed"] == model.metadata["seed"]
    assert log["step"][0] == 0 and log["step"][-1] == model.metadata["steps"]
    assert log["loss"][-1] == model.metadata["final_loss"]
    assert all(len(log[key]) == len(log["step"]) for key in log if key != "seed")
    assert log["loss"][-1] < log["loss"][0]
    scores = score_slots(model)  # the log (torch) and the analysis (numpy) agree on the final model
    assert log["rule_accuracy_held_out"][-1] == scores.rule_accuracy
    assert log["bigram_top1"][-1] == scores.bigram_top1


def test_family_eight_independent_seeds_same_shape_same_world(model):
    members = family()
    assert len(members) == 8
    seeds = [m.metadata["seed"] for m in members]
    assert len(set(seeds)) == 8 and model.metadata["seed"] not in seeds
    for member in members:
        assert member.config == PRIMER_CONFIG and member.n_params == 736
        assert member.metadata["corpus_hash"] == corpus_hash()
        assert member.metadata["training_seconds"] <= 60
        log = training_log(member)
        assert log["loss"][-1] == member.metadata["final_loss"]
        assert log["rule_accuracy_held_out"][-1] == score_slots(member).rule_accuracy
    assert not np.array_equal(members[0].params["E"], model.params["E"])


def test_loader_refuses_a_file_that_does_not_fit(tmp_path, model):
    doc = json.loads(MAIN.read_text(encoding="utf-8"))
    doc["parameters"]["blocks.0.attn.W_O"] = doc["parameters"]["blocks.0.attn.W_O"][:5]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError):
        load(path)
    doc = json.loads(MAIN.read_text(encoding="utf-8"))
    doc["format"] = "pickle"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError, match="not a"):
        load(path)
