"""The "where the primer's text and its numbers disagree" box: each sentence, the printed numbers and the check.

The sentences and figures come from core.explain.primer_slips (the primer's assets); this module only words them.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.explain.primer_slips import Slip, appendix_a_slips, section6_slips

TITLE = "Where the primer's text and its numbers disagree"
RIGHT_TITLE = "Looks like a slip, checks out"


def _code(text: str) -> str:
    """Tokens such as <BOS> as inline code, so markdown shows them instead of reading them as tags."""
    return text.replace("<BOS>", "`<BOS>`")


def _weights(f: dict) -> str:
    return ", ".join(f"{t} {w:.3f}" for t, w in zip(f["tokens"], f["weights"], strict=True))


PRINTED, WORLD = "Printed", "Checked against"


def _layer(f: dict) -> str:
    return f"layer {f['layer']}, head {f['head']}, row for {f['row']}"


def _share(values: list[float], decimals: int = 3) -> str:
    return " + ".join(f"{v:.{decimals}f}" for v in values)


def printed_and_check(slip: Slip) -> tuple[str, str, str]:
    """What the sentence is checked against (its label and the figures) and what they say."""
    f, key = slip.figures, slip.key
    if key in ("head1_sat_largest", "head2_cat_the"):
        return (
            PRINTED,
            f"{_layer(f)}: {_weights(f)}",
            f"the largest share is on {f['largest']} ({f['largest_weight']:.3f}); {f['claimed']} gets "
            f"{f['claimed_weight']:.3f}.",
        )
    if key == "head2_sat_self":
        return (
            PRINTED,
            f"{_layer(f)}: {_weights(f)}",
            f"{f['claimed']} keeps {f['claimed_weight']:.3f} of the weight, "
            + ("less than half." if f["claimed_weight"] < 0.5 else "not almost all."),
        )
    if key == "gamma_close_to_3":
        return (
            PRINTED,
            f"γ from {f['min']:.3f} to {f['max']:.3f}",
            f"every coordinate is at least {f['value'] - f['max']:.3f} below {f['value']}, up to {f['worst']:.3f}; the "
            f"mean is {f['mean']:.2f}.",
        )
    if key == "span_about_nine":
        return (
            PRINTED,
            f"LN(h²)_last from {f['min']:.3f} to {f['max']:.3f}",
            f"the entries span {f['span']:.2f}, not about {f['value']}.",
        )
    if key == "runners_up_share":
        tokens = " and ".join(f["tokens"])
        each = ", ".join(f"{t} {v:.3f}" for t, v in zip(f["tokens"], f["printed"], strict=True))
        logits = ", ".join(f"{t} {v:.3f}" for t, v in zip(f["tokens"], f["logits"], strict=True))
        return (
            PRINTED,
            f"the probability line: {each} (together {f['printed_sum']:.3f}); the line of all {f['n_logits']} logits "
            f"({logits}, …)",
            f"the softmax of the printed logits gives {tokens} {_share(f['computed'], 4)} = "
            f"{f['computed_sum']:.4f}, which is {f['computed_sum']:.3f} at three decimals: the sentence is right. The "
            f"printed {_share(f['printed'])} add up to {f['printed_sum']:.3f} only because each was rounded on its "
            "own.",
        )
    if key == "two_decimal_rounding":
        return (
            PRINTED,
            f"the probability line at {f['decimals']} decimals, summing to {f['printed_sum']:.3f}; the top-5 table's "
            f"logits at {f['logit_decimals']}",
            f"the distribution is printed to {f['decimals']} decimals, not {f['value']}; only the top-5 table's "
            f"logits are rounded to {f['logit_decimals']}.",
        )
    if key == "only_nonlinearity":
        return (
            PRINTED,
            "the final LayerNorm's h²_last, γ and β (Step 8) and the logits",
            "a linear map f has f(2x) = 2·f(x). With the printed numbers, LN(2·h²_last) differs from 2·LN(h²_last) by "
            f"up to {f['layernorm']:.3f}, and softmax(2·logits) from 2·softmax(logits) by up to {f['softmax']:.3f}. "
            "GELU is the only element-wise non-linearity; the softmax of every head and of the read-out and the "
            "LayerNorms are non-linear too.",
        )
    if key == "dff_four_times":
        columns = "; ".join(
            f"{name}: d_ff {ff:,} = {r:.2f} × d_model {dm:,}"
            for name, ff, dm, r in zip(f["names"], f["d_ff"], f["d_model"], f["ratio"], strict=True)
        )
        gated = [n for n, g in zip(f["names"], f["gated"], strict=True) if g]
        reason = (
            f" {' and '.join(gated)} has a gated MLP (three matrices of d_model × d_ff, not two), whose width is "
            f"usually set near {f['value']} × ⅔ · d_model so that its weights match a two-matrix MLP of "
            f"{f['value']} · d_model."
            if gated
            else ""
        )
        return (
            "The table's own columns",
            columns,
            f"the modern 7B column is {min(f['ratio']):.2f} × d_model, not about {f['value']}.{reason}",
        )
    if key == "five_after_the":
        return (
            WORLD,
            f"the dashboard's reconstruction of the toy world's {f['n_types']} sentence types (docs/world.md); the "
            "primer describes the world but does not print its sentence types",
            f"{len(f['anywhere'])} different tokens follow '{f['token']}' ({', '.join(f['anywhere'])}); after a "
            f"sentence's first '{f['token']}', {len(f['first'])} ({', '.join(f['first'])}).",
        )
    if key == "bigram_could_answer":
        return (
            PRINTED,
            f"top-1 {f['value']:.3f} on the {f['n_slots']} bigram slots (the primer's trained model)",
            f"in the dashboard's reconstruction of the world, a predictor reading only the current token tops out at "
            f"{f['token_only']:.3f} on those slots; {f['position_aware']:.3f} needs the token's position as well. "
            "What is true is that they need no attention to other tokens.",
        )
    if key == "wv_equivalent":
        kept, literal, zeroed = f["kept"], f["literal"], f["zeroed"]
        return (
            PRINTED,
            f["biases"],
            f"with biases the write-back is not zero: W_O = 0 still adds b_O, W_V = 0 still adds b_V · W_O + b_O. On "
            f"our model of the same design ({f['n_params']} parameters; the primer's weights are not published), "
            f"{literal.check}: max |Δ| = {literal.max_abs_delta:.3g} over the logits; {kept.check}: max |Δ| = "
            f"{kept.max_abs_delta:.3g}. Only {zeroed.check} gives every bit equal.",
        )
    raise ValueError(f"no wording for {key!r}")


def slips(*keys: str) -> list[Slip]:
    """The registry's checked sentences with these keys, in the order asked."""
    by_key = {slip.key: slip for slip in (*section6_slips(), *appendix_a_slips())}
    return [by_key[key] for key in keys]


def entry(slip: Slip) -> str:
    """One checked sentence as markdown: where it stands, the sentence, what it is checked against, the check."""
    label, shown, check = printed_and_check(slip)
    return f"**{slip.section}.** “{_code(slip.sentence)}”  \n**{label}:** {_code(shown)}.  \n**Check:** {_code(check)}"


def slip_box(slips: Sequence[Slip], *, key: str) -> None:
    """One bordered box listing the primer's sentences that its own printed numbers contradict, then any sentence
    that looks contradicted but checks out (with the reason)."""
    wrong = [s for s in slips if not s.holds]
    right = [s for s in slips if s.holds]
    if not wrong and not right:
        return
    with st.container(border=True, key=key):
        if wrong:
            st.markdown(f"**{TITLE}**")
            for slip in wrong:
                st.markdown(entry(slip))
        if right:
            st.markdown(f"**{RIGHT_TITLE}**")
            for slip in right:
                st.markdown(entry(slip))
