"""The ablation lab's first two tabs (primer Appendix A): ① both roads to switching attention off give the same
model, and ② the primer's prompt table beside ours."""

from __future__ import annotations

from functools import cache

import plotly.graph_objects as go
import streamlit as st

from core.explain import experiments as ex
from core.explain.analysis import head_label
from core.explain.primer import hand_example
from core.explain.transformer import hand_model
from ui.ablation_lab.results import NOT_PRINTED, PRIMER, primer_value, shared, three_decimals
from ui.ablation_lab.state import HEADS, MODEL, Setting, q
from ui.elements.comparisons import grouped_bars
from ui.elements.primer_slips import slip_box, slips
from ui.elements.static_table import static_table
from ui.elements.widgets import OnFirstUse, chart, download_table, explain

pd = OnFirstUse("pandas")


# --------------------------------------------------------------------------------------------------- ① both roads
def both_roads(_: Setting) -> None:
    """① Method 1 vs Method 2, the head-ablation identity and the cat/mat swap, beside the primer."""
    st.markdown(
        "Appendix A disables attention two ways. **Method 1** deletes the attention blocks; **Method 2** keeps them "
        "but sets the write-back to zero, so whatever the heads compute adds nothing to the residual stream."
    )
    left, right = st.columns(2)
    left.latex(r"\text{Method 1:}\quad h^{(\ell+1)} = h^{(\ell)} + \mathrm{MLP}\big(h^{(\ell)}\big)")
    right.latex(r"\text{Method 2:}\quad W_O = 0,\; b_O = 0 \;\Rightarrow\; h_{\text{mid}} = h^{(\ell)} + 0")
    chart(
        roads_figure(),
        key="roads",
        alt=f"The {len(MODEL.vocabulary)} next-token logits with attention on, deleted, and silenced.",
    )
    checks, columns, rows = identity_table()
    static_table(columns, rows, label="Identity checks", download=("identity checks", "ablation-identities"))
    by = {c.key: c for c in checks}
    same = [c for c in checks if c.key != "swap_attention_on" and c.identical]
    on = by["swap_attention_on"]
    held = f"All {len(same)}" if len(same) == len(checks) - 1 else f"Only {len(same)} of the {len(checks) - 1}"
    explain(
        f"{held} identities hold to the last bit on our model, as in the primer. Method 2 against Method 1: "
        f"{brief(by['method2_vs_method1'])} on {q(ex.CAT)} and {brief(by['method2_vs_method1_corpus'])} at every "
        f"position of the corpus; attention off, {q(ex.CAT)} against {q(ex.MAT)}: {brief(by['swap_attention_off'])}. "
        f"With attention on, swapping the noun moves one logit by {on.max_abs_delta:.3f} (the primer's model: "
        f"{PRIMER.identity['swap_attention_on']['value']:.3f}).",
        "The switch the engine uses to remove a head is exactly the weight edit a reviewer would make by hand, and "
        "deleting attention equals silencing it, bit for bit. So the ablation results on this page are facts about "
        f"the model, not artefacts of the tooling: an audit can reproduce them from the {MODEL.n_params} published "
        "parameters alone.",
    )
    method2_remarks()


def method2_remarks() -> None:
    """Appendix A's two remarks on Method 2, each checked: W_V = 0 is not equivalent once the projections carry
    biases (a slip, in the registry's box); attending only to itself doubles a row."""
    doubling = self_attention_run()
    st.markdown("**Two remarks of Appendix A, checked**")
    slip_box(slips("wv_equivalent"), key="ablation-slips-method2")
    first = doubling.h0[0]
    st.markdown(
        f"“{PRIMER.remarks['self_attention']}” On the primer's §5 head with W_V = W_O = I and each token reading only "
        f"itself, '{hand_example().prompt[0]}' goes in as [{', '.join(f'{v:.2f}' for v in first)}] and comes out as "
        f"[{', '.join(f'{v:.2f}' for v in doubling.h1[0])}]: "
        + ("exactly twice its row" if doubling.doubled else "not twice its row")
        + f", moved by up to {doubling.largest_change:.2f}, not passed through."
    )


@cache
def self_attention_run() -> ex.SelfAttention:
    """The §5 head with self-only attention and W_V = W_O = I."""
    return ex.self_attention(hand_model(), hand_example().X)


@cache
def roads_figure() -> go.Figure:
    """The 20 logits by attention on, Method 1, Method 2 and the swapped noun (built once, shared read-only)."""
    fig = grouped_bars(
        MODEL.vocabulary,
        list(ex.road_logits(MODEL).items()),
        title=f"{len(MODEL.vocabulary)} logits after {q(ex.CAT)}: attention on, and off three ways",
        y_range=None,
        y_title="logit",
        show_values=False,
        height=380,
    )
    return shared(fig)


@cache
def identity_table() -> tuple[tuple[ex.Check, ...], tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """Appendix A's identity checks on the trained model, with the primer's printed column beside ours: the checks,
    and the table's columns and rows (drawn as plain HTML: the tab that opens first then needs no pandas)."""
    checks = ex.identity_checks(MODEL)
    columns = ("check", f"max |Δ| over the {len(MODEL.vocabulary)} logits (ours, live)", "primer (printed)")
    rows = tuple(
        (
            c.check,
            c.shown,
            _primer_check(PRIMER.identity[c.key]) if c.key in PRIMER.identity else "not run",
        )
        for c in checks
    )
    return checks, columns, rows


def brief(check: ex.Check) -> str:
    """A check in running text."""
    return "every bit equal" if check.identical else f"max |Δ| = {check.max_abs_delta:.3g}"


def _primer_check(row: dict) -> str:
    """A printed identity row as the primer prints it."""
    return "0 (identical to the last bit)" if row["identical"] else f"{row['value']:.3f}"


# --------------------------------------------------------------------------------------------------- ② prompt table
@cache
def primer_prompt_rows() -> dict[tuple[str, str], dict]:
    """The primer's printed prompt-table rows, keyed (prompt, configuration)."""
    return {(r["prompt"], r["configuration"]): r for r in PRIMER.prompt_rows}


@cache
def prompt_frames() -> tuple[list[ex.PromptRow], pd.DataFrame, pd.DataFrame]:
    """The prompt table's rows; the full table for the download; the compact one shown (the primer in one column)."""
    rows = ex.prompt_table(MODEL)
    printed = primer_prompt_rows()
    frame = pd.DataFrame(
        [
            {
                "prompt": r.prompt,
                "attention": r.configuration,
                "top token": r.top_token,
                "its probability": round(r.probability, 3),
                "p(big) + p(small)": round(r.p_big_small, 3),
                "p(red) + p(blue)": round(r.p_red_blue, 3),
                "primer: top token": row.get("top_token", NOT_PRINTED),
                "primer: probability": primer_value(row.get("probability")),
                "primer: p(big) + p(small)": primer_value(row.get("p_big_small")),
            }
            for r in rows
            for row in [printed.get((r.prompt, r.configuration), {})]
        ]
    )
    shown = frame.iloc[:, :6].assign(
        primer=[
            NOT_PRINTED if t == NOT_PRINTED else f"{t} · {p} · {m}"
            for t, p, m in zip(
                frame["primer: top token"],
                frame["primer: probability"],
                frame["primer: p(big) + p(small)"],
                strict=True,
            )
        ]
    )
    return rows, frame, shown


def prompt_table_tab(_: Setting) -> None:
    """② The primer's prompt table, extended to every single head, its printed rows beside ours."""
    rows, frame, shown = prompt_frames()
    printed = primer_prompt_rows()
    st.dataframe(
        shown,
        hide_index=True,
        width="stretch",
        row_height=35,
        height=35 * (len(shown) + 1) + 4,
        column_config={
            **three_decimals(shown),
            "prompt": st.column_config.TextColumn(width="medium"),
            "its probability": st.column_config.NumberColumn("probability", format="%.3f"),
            "primer": st.column_config.TextColumn(
                "primer (printed)", help="The primer's own model: top token · its probability · p(big) + p(small)"
            ),
        },
    )
    download_table(frame, name="prompt table", key="ablation-prompts")
    by = {(r.prompt, r.configuration): r for r in rows}
    cat, mat = " ".join(ex.CAT), " ".join(ex.MAT)
    cat_on, mat_on, cat_off, mat_off = by[cat, ex.ON], by[mat, ex.ON], by[cat, ex.OFF], by[mat, ex.OFF]
    first = ex.configuration_label([HEADS[0]])
    cat_l1 = by[cat, first]
    printed_off = printed[cat, ex.OFF]
    off_text = (
        f"both answer {cat_off.top_token} at {cat_off.probability:.3f}"
        if (cat_off.top_token, cat_off.probability) == (mat_off.top_token, mat_off.probability)
        else f"{cat_off.top_token} at {cat_off.probability:.3f} and {mat_off.top_token} at {mat_off.probability:.3f}"
    )
    printed_l1 = printed[cat, first]
    explain(
        f"Attention on: {q(cat)} answers {cat_on.top_token} ({cat_on.probability:.3f}, {cat_on.p_big_small:.3f} on "
        f"big + small) and {q(mat)} answers {mat_on.top_token} ({mat_on.probability:.3f}): opposite sides of the "
        f"rule. Attention off: {off_text}, because nothing at *is* can see the noun (the primer's model: "
        f"{printed_off['top_token']} at {printed_off['probability']:.3f}). With {head_label(HEADS[0])} removed, "
        f"{q(cat)} answers {cat_l1.top_token} at {cat_l1.probability:.3f} (primer: "
        f"{printed_l1['top_token']} at {printed_l1['probability']:.3f}).",
        f"A damaged model does not go quiet: with attention off it still says {cat_off.top_token} after {q(cat)} "
        f"with probability {cat_off.probability:.2f}, fluent, confident and wrong. A high probability is not evidence "
        "that a rule was applied, which is why an evaluation has to score what the answer should be, not how sure "
        "the model sounds. These numbers describe a damaged network, not what a model trained without attention "
        "could learn.",
    )
