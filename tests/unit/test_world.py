"""The toy world follows the primer's description: vocabulary, 64 types, class adjectives, held-out split, slots."""

from collections import Counter
from pathlib import Path

import numpy as np

from core.explain.world import (
    CLASS_ADJECTIVES,
    NOUN_CLASS,
    PAD,
    TOKEN_ID,
    VOCABULARY,
    corpus,
    held_out_corpus,
    sentence_types,
    training_corpus,
    world_markdown,
)

ROOT = Path(__file__).resolve().parents[2]
ADJECTIVE_CLASS = {adj: cls for cls, adjs in CLASS_ADJECTIVES.items() for adj in adjs}


def test_vocabulary_is_the_primers_in_order():
    expected = [
        "<PAD>", "<BOS>", "<EOS>", "<SEP>", "the", "cat", "dog", "mat", "floor", "sat",
        "ran", "is", "was", "on", "big", "small", "red", "blue", "fast", "slow",
    ]  # fmt: skip
    assert list(VOCABULARY) == expected


def test_sixty_four_types_bos_to_eos_all_distinct():
    types = sentence_types()
    assert len(types) == 64
    assert len({t.text for t in types}) == 64
    assert all(t.tokens[0] == "<BOS>" and t.tokens[-1] == "<EOS>" for t in types)
    assert Counter(t.family for t in types) == {"sat": 36, "ran": 12, "copula": 16}
    used = {w for t in types for w in t.tokens}
    assert used == set(VOCABULARY) - {"<PAD>", "<SEP>"}


def test_adjectives_agree_with_noun_class_and_sat_is_followed_by_on():
    for t in sentence_types():
        for word, following in zip(t.tokens, t.tokens[1:], strict=False):
            if word in ADJECTIVE_CLASS and following in NOUN_CLASS:
                assert ADJECTIVE_CLASS[word] == NOUN_CLASS[following], t.text
            if word == "sat":
                assert following == "on", t.text


def test_sixteen_copula_types_subject_without_adjective():
    copula = [t for t in sentence_types() if t.family == "copula"]
    got = {tuple(t.words) for t in copula}
    expected = {
        ("the", noun, verb, adj)
        for noun in NOUN_CLASS
        for verb in ("is", "was")
        for adj in CLASS_ADJECTIVES[NOUN_CLASS[noun]]
    }
    assert got == expected
    # no other sentence uses is/was
    assert all(("is" in t.words or "was" in t.words) == (t.family == "copula") for t in sentence_types())


def test_held_out_split_eight_types_five_copula_each_with_its_sibling_in_training():
    held = [t for t in sentence_types() if t.held_out]
    assert len(held) == 8
    assert sum(t.family == "copula" for t in held) == 5
    training = {t.words for t in sentence_types() if not t.held_out}
    for t in held:
        if t.family == "copula":
            sibling = next(a for a in CLASS_ADJECTIVES[NOUN_CLASS[t.subject]] if a != t.words[-1])
            assert (*t.words[:-1], sibling) in training
    assert len(training_corpus().types) == 56 and len(held_out_corpus().types) == 8
    assert all(not t.held_out for t in training_corpus().types)


def test_slot_counts_match_the_primer():
    c = corpus()
    assert c.n_slots == 448 == sum(len(t.tokens) - 1 for t in c.types)
    assert int((~c.slot_copula).sum()) == 432
    assert int(c.slot_copula.sum()) == 16
    assert int((c.slot_copula & c.slot_held_out).sum()) == 5


def test_slots_point_at_the_right_tokens():
    c = corpus()
    current = c.ids[c.slot_sentence, c.slot_position]
    assert np.array_equal(c.ids[c.slot_sentence, c.slot_position + 1], c.slot_target)
    assert np.array_equal(c.slot_copula, np.isin(current, [TOKEN_ID["is"], TOKEN_ID["was"]]))
    copula = np.flatnonzero(c.slot_copula)
    subject = c.ids[c.slot_sentence[copula], c.slot_subject_position[copula]]
    assert np.array_equal(c.slot_subject_position[copula], c.slot_position[copula] - 1)
    for s, noun in zip(copula, subject, strict=True):
        assert [VOCABULARY[i] for i in c.slot_class[s]] == list(CLASS_ADJECTIVES[NOUN_CLASS[VOCABULARY[noun]]])
        assert c.slot_target[s] in c.slot_class[s]
    assert (c.slot_class[~c.slot_copula] == -1).all()


def test_padding_and_lengths():
    c = corpus()
    for row, t in enumerate(c.types):
        assert c.lengths[row] == len(t.tokens)
        assert [VOCABULARY[i] for i in c.ids[row, : c.lengths[row]]] == list(t.tokens)
        assert (c.ids[row, c.lengths[row] :] == PAD).all()


def test_allowed_sets_copula_needs_context_bigram_slots_do_not_need_more_than_their_token():
    c = corpus()
    assert c.allowed_prefix[np.arange(c.n_slots), c.slot_target].all()
    assert not (c.allowed_prefix & ~c.allowed_current).any()  # context only ever narrows the choice
    # At a copula slot the current token allows all four adjectives, the prefix only the subject's two.
    copula = c.slot_copula
    assert (c.allowed_current[copula].sum(axis=1) == 4).all()
    assert (c.allowed_prefix[copula].sum(axis=1) == 2).all()
    assert not c.context_free[copula].any()
    assert c.context_free.sum() > 0
    # sat -> on is context-free
    sat = c.ids[c.slot_sentence, c.slot_position] == TOKEN_ID["sat"]
    assert c.context_free[sat].all()


def test_docs_table_is_generated_from_the_code():
    text = (ROOT / "docs" / "world.md").read_text(encoding="utf-8")
    assert world_markdown() in text
    for t in sentence_types():
        assert f"| {t.index} | {t.text} |" in text
