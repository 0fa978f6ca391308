"""The "where the primer's text and its numbers disagree" box: each sentence, the printed numbers and the check.

The sentences and figures come from core.explain.primer_slips (the primer's assets); this module only words them.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.explain.primer_slips import Slip

TITLE = "Where the primer's text and its numbers disagree"


def _code(text: str) -> str:
    """Tokens such as <BOS> as inline code, so markdown shows them instead of reading them as tags."""
    return text.replace("<BOS>", "`<BOS>`")


def _weights(f: dict) -> str:
    return ", ".join(f"{t} {w:.3f}" for t, w in zip(f["tokens"], f["weights"], strict=True))


def printed_and_check(slip: Slip) -> tuple[str, str]:
    """The printed numbers the sentence is about, and what they say."""
    f, key = slip.figures, slip.key
    if key in ("head1_sat_largest", "head2_cat_the"):
        return (
            f"layer 1, head {f['head']}, row for {f['row']}: {_weights(f)}",
            f"the largest share is on {f['largest']} ({f['largest_weight']:.3f}); {f['claimed']} gets "
            f"{f['claimed_weight']:.3f}.",
        )
    if key == "head2_sat_self":
        return (
            f"layer 1, head {f['head']}, row for {f['row']}: {_weights(f)}",
            f"{f['claimed']} keeps {f['claimed_weight']:.3f} of the weight, "
            + ("less than half." if f["claimed_weight"] < 0.5 else "not almost all."),
        )
    if key == "gamma_close_to_3":
        return (
            f"γ from {f['min']:.3f} to {f['max']:.3f}",
            f"every coordinate is at least {3 - f['max']:.3f} below {f['value']}, up to {f['worst']:.3f}; the mean is "
            f"{f['mean']:.2f}.",
        )
    if key == "span_about_nine":
        return (
            f"LN(h²)_last from {f['min']:.3f} to {f['max']:.3f}",
            f"the entries span {f['span']:.2f}, not about {f['value']}.",
        )
    if key == "redo_within_0001":
        redo = ", ".join(f"{v:.3f}" for v in f["redo"])
        return (
            f"h²_last, γ, β and LN(h²)_last at three decimals (mean {f['printed_mean']:.3f}, σ {f['printed_std']:.3f})",
            f"redoing the norm from those lines gives [{redo}], up to {f['miss']:.3f} from the printed line, more "
            f"than the ±{f['value']} stated. It is rounding, not a wrong sum: every printed h², γ and β entry is "
            f"off by up to ±{f['step']}, and the norm divides h²'s error by σ = {f['std']:.3f} and multiplies it by "
            f"γ, so the output can move by up to {f['bound']:.3f}.",
        )
    if key == "five_after_the":
        return (
            "the toy world's 64 sentence types",
            f"{len(f['anywhere'])} different tokens follow '{f['token']}' ({', '.join(f['anywhere'])}); after a "
            f"sentence's first '{f['token']}', {len(f['first'])} ({', '.join(f['first'])}).",
        )
    if key == "bigram_could_answer":
        return (
            f"top-1 {f['value']:.3f} on the {f['n_slots']} bigram slots (the primer's trained model)",
            f"a predictor reading only the current token tops out at {f['token_only']:.3f} on those slots; "
            f"{f['position_aware']:.3f} needs the token's position as well. What is true is that they need no "
            "attention to other tokens.",
        )
    raise ValueError(f"no wording for {key!r}")


def slip_box(slips: Sequence[Slip], *, key: str) -> None:
    """One bordered box listing the primer's sentences that its own printed numbers contradict."""
    wrong = [s for s in slips if not s.holds]
    if not wrong:
        return
    with st.container(border=True, key=key):
        st.markdown(f"**{TITLE}**")
        for slip in wrong:
            shown, check = printed_and_check(slip)
            st.markdown(
                f"**{slip.section}.** “{_code(slip.sentence)}”  \n**Printed:** {_code(shown)}.  \n**Check:** "
                f"{_code(check)}"
            )
