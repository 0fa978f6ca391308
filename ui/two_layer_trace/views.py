"""The two-layer trace page's tabs beyond the step table (primer §6 and §7): the four heads, the residual spine, the
copula rule, training, the primer's printed figures beside ours and the Step 8 read-out, and the headline.

Kept out of pages/two_layer_trace.py because Streamlit re-parses (and "magic"-rewrites) a page script on every
AppTest run, at ~10 µs per syntax node; an imported module is parsed once."""

from __future__ import annotations

import numpy as np
import streamlit as st

from core.explain.trace_views import (
    COPULA_PROBES,
    CopulaProbe,
    PrimerSection6,
    head_labels,
    lens_probabilities,
    primer_section6,
    query_attention,
    residual_stages,
    row_moments,
    rule_emergence,
    stage_norms,
    stage_projection,
    top_k,
)
from core.explain.transformer import Model, Trace
from core.explain.world import sentence_types
from ui.elements.comparisons import grouped_bars, line_chart, trajectories
from ui.elements.glossary import link
from ui.elements.primer_slips import slip_box, slips
from ui.elements.widgets import OnFirstUse, chart, download_matrix, download_table, explain
from ui.two_layer_trace.matrices import column_names, frame_table, matrix, panel, panel_grid, spaced, token_rows
from ui.two_layer_trace.results import cached_trace, copula_rows, probe, shipped_training_log
from ui.two_layer_trace.steps import step_by_step

pd = OnFirstUse("pandas")


def four_heads(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """The attention weights of all four heads side by side for the current prompt."""
    config, rows = model.config, token_rows(tokens)
    labels = head_labels(config)
    patterns = [
        trace[f"blocks.{la}.attn.hook_pattern"][he] for la in range(config.n_layers) for he in range(config.n_heads)
    ]
    panel_grid(
        [
            panel(pattern, labels[i], rows, rows, f"tr-4h-{i}", signed=False, alt=f"Attention weights, {labels[i]}")
            for i, pattern in enumerate(patterns)
        ],
        per_row=2,
    )
    last = query_attention(trace, config.n_layers)
    focus = np.argmax(last, axis=1)
    explain(
        f"Rows are the reading word, columns the word read; each row sums to 1. The last word, {tokens[-1]}, reads "
        + "; ".join(f"{labels[i]}: {tokens[k]} {last[i, k]:.3f}" for i, k in enumerate(focus))
        + ".",
        f"{len(labels)} heads, {len(labels)} reading patterns on the same words. A bright cell (the brightest here is "
        f"{last.max():.3f}) shows where a head looks, not that the answer depends on it: the ablation lab tests that.",
    )


def residual_spine(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """The residual stream stage by stage (norms and a shared 2-D projection) and the logit lens."""
    config = model.config
    stages = [label for label, _ in residual_stages(trace, config.n_layers)]
    norms = stage_norms(trace, config.n_layers)
    names = token_rows(tokens)
    a, b = st.columns(2)
    with a:
        chart(
            line_chart(
                stages,
                {name: norms[:, i] for i, name in enumerate(names)},
                title="length of each token's vector, stage by stage",
                y_title="length",
            ),
            key="tr-norms",
            alt="Residual norms per stage",
        )
        download_matrix(norms, stages, names, name="residual lengths", key="tr-norms")
    with b:
        coords, share = stage_projection(trace, config.n_layers)
        chart(
            trajectories(
                {name: coords[:, i] for i, name in enumerate(names)},
                stages,
                title="each token's path through the stream (2-D view)",
                x_title=f"first axis ({share[0]:.0%} of the spread)",
                y_title=f"second axis ({share[1]:.0%})",
            ),
            key="tr-paths",
            alt="Residual stream paths",
        )
        download_matrix(
            coords.reshape(len(stages), -1),
            stages,
            [f"{n} {ax}" for n in names for ax in ("x", "y")],
            name="2-D coordinates",
            key="tr-paths",
        )
    grow = norms[-1] - norms[0]
    explain(
        f"Each token starts at h⁰ and every block adds a correction. {tokens[-1]}'s vector has length "
        f"{norms[0, -1]:.3f} at the start and {norms[-1, -1]:.3f} at the end; the token whose length changes most "
        f"over the pass is '{tokens[int(np.argmax(np.abs(grow)))]}'. The 2-D view keeps {share.sum():.0%} of the "
        "spread; a circle marks the start, a triangle the end.",
        f"The {link('residual-stream')} is the spine of the model: all the 'thinking' is {len(stages) - 1} additions "
        "to these vectors, so watching them move shows where the work happens.",
    )
    lens_labels, lens = lens_probabilities(model, trace)
    vocab = list(model.vocabulary)
    matrix(
        lens,
        title=f"logit lens: what the model would predict after '{spaced(tokens)}' if it stopped here",
        rows=lens_labels,
        columns=vocab,
        key="tr-lens",
        alt="Logit lens",
        signed=False,
    )
    best = np.argmax(lens, axis=1)
    explain(
        "Reading the last token's vector through the final LayerNorm and Eᵀ after each block: "
        + "; ".join(
            f"{label} → {vocab[k]} {lens[i, k]:.3f}" for i, (label, k) in enumerate(zip(lens_labels, best, strict=True))
        )
        + ".",
        f"The logit lens shows when the answer forms inside the model: '{vocab[best[-1]]}' is first the top "
        f"prediction at '{next(label for label, k in zip(lens_labels, best, strict=True) if k == best[-1])}'; the "
        "last line is the model's real output.",
    )


def favourite(probe: CopulaProbe) -> str:
    """The top answer of a copula probe in running text, or the top two when they tie at the three decimals shown
    ('blue and red, tied at 0.500')."""
    first, second = probe.top[:2]
    if f"{first.probability:.3f}" == f"{second.probability:.3f}":
        return f"{first.token} and {second.token}, tied at {first.probability:.3f}"
    return f"{first.token} ({first.probability:.3f})"


def copula_view(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """§6's copula probe side by side (cat is / mat is / dog was / floor was) and all 16 copula types."""
    vocab = list(model.vocabulary)
    probes = [probe(prompt) for prompt in COPULA_PROBES]
    adjectives = [word for pair in (probes[0].adjectives, probes[1].adjectives) for word in pair]
    labels = [f"{spaced(p.prompt[1:])} …<br>class mass {p.class_mass:.3f}" for p in probes]
    series = [(word, [float(p.probs[vocab.index(word)]) for p in probes]) for word in adjectives]
    fig = grouped_bars(
        labels, series, title="next-word probability of each adjective", value_format=".3f", y_range=(0, 1.15)
    )
    chart(fig, key="tr-cop", alt="Probability of big, small, red and blue after four copula prompts")
    download_matrix(
        np.stack([p.probs for p in probes]),
        [spaced(p.prompt) for p in probes],
        vocab,
        name="distributions",
        key="tr-cop",
    )
    explain(
        "After a copula the next word must be an adjective of the subject's class: "
        + "; ".join(
            f"'{spaced(p.prompt[1:])}' puts {p.class_mass:.3f} on {' + '.join(p.adjectives)} "
            f"({'an' if p.subject_class[0] in 'aeiou' else 'a'} {p.subject_class})"
            for p in probes
        )
        + ".",
        "The deciding word is the noun one place back, never the copula itself: only attention can carry it there. "
        f"Swapping {probes[0].prompt[-2]} for {probes[1].prompt[-2]} moves the answer from {favourite(probes[0])} "
        f"to {favourite(probes[1])}: from the {probes[0].subject_class} adjectives to the "
        f"{probes[1].subject_class} ones, the primer's evidence that the model uses context.",
    )
    rows = copula_rows()
    frame = pd.DataFrame(
        {
            "sentence type": [r.sentence for r in rows],
            "held out of training": ["held out" if r.held_out else "" for r in rows],
            "top prediction after is/was": [r.top for r in rows],
            "its probability": [round(r.top_probability, 3) for r in rows],
            "right class": ["yes" if r.right_class else "NO" for r in rows],
            "class-adjective mass": [round(r.class_mass, 3) for r in rows],
        }
    )
    st.markdown(f"**All {len(rows)} copula sentence types of the world**")
    frame_table(frame, key="tr-cop-table", name="copula types", height=36 * (len(frame) + 1) + 4)
    held = [r for r in rows if r.held_out]
    masses = [r.class_mass for r in rows]
    explain(
        f"The model answers inside the right class on {sum(r.right_class for r in rows)} of {len(rows)} types, "
        f"{sum(r.right_class for r in held)} of the {len(held)} held out of training included, with a class mass "
        f"between {min(masses):.3f} and {max(masses):.3f}. Two types that differ only in the final adjective share "
        "one row of numbers: the model sees the same prefix.",
        f"Held-out sentences are the test of a rule rather than a memory: the model never saw these {len(held)} and "
        f"still answers {sum(r.right_class for r in held)} of them by the class of the noun.",
    )


def training_view(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """The training log (loss, rule accuracy) with the moment the copula rule appears, and the corpus."""
    log = shipped_training_log()
    steps = log["step"]
    first, stays = rule_emergence(steps, log["rule_accuracy_held_out"])
    marker = (first, f"copula rule first right on all held-out types (step {first})") if first is not None else None
    a, b = st.columns(2)
    with a:
        fig = line_chart(
            steps,
            {"training loss": log["loss"]},
            title="training loss (cross-entropy)",
            x_title="step",
            y_title="loss",
            marker=marker,
        )
        chart(fig, key="tr-loss", alt="Training loss over steps")
    with b:
        series = {
            "rule accuracy (held-out copula types)": log["rule_accuracy_held_out"],
            "right class, all copula slots": log["copula_class_accuracy"],
            "top-1, bigram slots": log["bigram_top1"],
        }
        fig = line_chart(
            steps,
            series,
            title="what the model gets right",
            x_title="step",
            y_title="share",
            marker=marker,
            marker_low=True,
            y_range=(-0.05, 1.1),
        )
        chart(fig, key="tr-acc", alt="Accuracies over steps")
    download_table(pd.DataFrame(log).drop(columns="seed", errors="ignore"), name="training log", key="tr-log")
    meta = model.metadata
    held_copula = sum(r.held_out for r in copula_rows())
    explain(
        f"Training ran {steps[-1]} steps (seed {meta.get('seed')}, {meta.get('training_seconds')} s on a CPU). "
        f"The loss fell from {log['loss'][0]:.3f} to {log['loss'][-1]:.3f}; the held-out rule accuracy first "
        f"reached 1 at step {first}"
        + (f" and has stayed there since step {stays}." if stays is not None else ".")
        + f" It moves in steps of 1/{held_copula}: {held_copula} held-out types carry a copula.",
        "The loss cannot fall to 0 because the world itself leaves choices open (after 'the cat is', big and small "
        "are both right). A single end-of-training score hides this history: the rule was learnt, could wobble, and "
        "settled; a second training run would tell the same story with different details.",
    )
    kinds = sentence_types()
    frame = pd.DataFrame(
        {
            "type": [k.index + 1 for k in kinds],
            "sentence type": [k.text for k in kinds],
            "held out of training": ["held out" if k.held_out else "" for k in kinds],
            "family": [k.family for k in kinds],
        }
    )
    st.markdown(f"**The corpus: {len(kinds)} sentence types, {sum(k.held_out for k in kinds)} held out of training**")
    frame_table(frame, key="tr-corpus", name="corpus", height=400)


def primer_vs_ours(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """The primer's printed §6 numbers (from assets/primer_section6.json) next to the same numbers for our model."""
    primer = primer_section6()
    vocab, labels = list(model.vocabulary), head_labels(model.config)
    st.caption(f"Primer figures: {primer.source} {primer.note}")
    prompt = tuple(primer.readout["prompt"])
    ours_trace = cached_trace(prompt)
    ours = top_k(ours_trace["hook_logits"][-1], vocab, 5)
    theirs = primer.readout["top5"]
    p_ours = float(ours_trace["hook_probs"][-1][vocab.index("on")])
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(f"P(on | {spaced(prompt[1:])}), primer", f"{primer.readout['p_on']:.3f}")
    m2.metric(f"P(on | {spaced(prompt[1:])}), ours", f"{p_ours:.3f}")
    rows = copula_rows()
    share = sum(r.right_class for r in rows) / len(rows)
    m3.metric("copula in class, primer", f"{primer.copula_probe['all_types']['right_class_share']:.0%}")
    m4.metric("copula in class, ours", f"{share:.0%}")
    st.markdown(f"**Top 5 after '{spaced(prompt)}'**")
    frame = pd.DataFrame(
        {
            "rank": [r["rank"] for r in theirs],
            "primer: token": [r["token"] for r in theirs],
            "primer: probability": [r["probability"] for r in theirs],
            "primer: logit": [r["logit"] for r in theirs],
            "ours: token": [r.token for r in ours],
            "ours: probability": [round(r.probability, 3) for r in ours],
            "ours: logit": [round(r.logit, 2) for r in ours],
        }
    )
    frame_table(frame, key="tr-pvo-top5", name="top 5, primer vs ours")
    st.markdown("**The copula probe: the three most likely next words**")
    probe_rows = []
    for row in primer.copula_probe["prompts"]:
        mine = probe(tuple(row["prompt"]))
        probe_rows.append(
            {
                "prompt": spaced(row["prompt"]),
                "primer's model": ", ".join(f"{t['token']} {t['probability']:.3f}" for t in row["top3"]),
                "our model": ", ".join(f"{t.token} {t.probability:.3f}" for t in mine.top),
            }
        )
    probes = pd.DataFrame(probe_rows)
    frame_table(probes, key="tr-pvo-probe", name="copula probe, primer vs ours")
    attention_prompt = tuple(primer.copula_query_attention["prompt"])
    ours_att = query_attention(cached_trace(attention_prompt), model.config.n_layers)
    keys = list(primer.copula_query_attention["keys"])
    subject = keys.index("cat")
    st.markdown(f"**Where the query 'is' looks in '{spaced(attention_prompt)}', head by head**")
    panel_grid(
        [
            panel(primer.query_attention, "primer's model", labels, keys, "tr-pvo-att-primer", signed=False),
            panel(ours_att, "our model", labels, keys, "tr-pvo-att-ours", signed=False),
        ]
    )
    theirs_top, ours_top = (int(np.argmax(matrix[:, subject])) for matrix in (primer.query_attention, ours_att))
    printed = primer.layer1_patterns
    pattern_prompt = tuple(printed["prompt"])
    ours_layer1 = cached_trace(pattern_prompt)["blocks.0.attn.hook_pattern"]
    printed_layer = printed["heads"][0]["layer"]  # the primer numbers layers from 1
    st.markdown(f"**Layer {printed_layer}'s attention weights on '{spaced(pattern_prompt)}' (primer §6, Step 3)**")
    names = token_rows(pattern_prompt)
    panel_grid(
        [
            panel(
                matrix,
                f"{who}, layer {printed_layer}, head {row['head']}",
                names,
                names,
                f"tr-pvo-l1-{who[:3]}-{i}",
                signed=False,
            )
            for i, row in enumerate(printed["heads"])
            for who, matrix in (("primer's model", np.array(row["weights"])), ("our model", ours_layer1[i]))
        ]
    )
    slip_box(slips("head1_sat_largest", "head2_sat_self", "head2_cat_the"), key="tr-slips-step3")
    gamma = model.params["ln_final.gamma"]
    step8_readout(model, primer, ours_trace, prompt)
    masses = [r.class_mass for r in rows]
    printed_mass = primer.copula_probe["all_types"]
    c1, c2 = st.columns(2)
    c1.metric(
        "class-adjective mass on all copula types, primer",
        f"{printed_mass['class_mass_min']:.2f}–{printed_mass['class_mass_max']:.2f}",
    )
    c2.metric("class-adjective mass on all copula types, ours", f"{min(masses):.2f}–{max(masses):.2f}")
    explain(
        f"Same behaviour: both models put almost everything on 'on' after '{spaced(prompt)}' (primer "
        f"{primer.readout['p_on']:.3f}, ours {p_ours:.3f}) and answer "
        f"{primer.copula_probe['all_types']['right_class_share']:.0%} and {share:.0%} of the copula types inside the "
        "subject's class. "
        f"Different internals: the query 'is' reads 'cat' most in {labels[theirs_top]} "
        f"({primer.query_attention[theirs_top, subject]:.3f}) in the primer's model and in "
        f"{labels[ours_top]} ({ours_att[ours_top, subject]:.3f}) in ours; our top logit is {ours[0].logit:.2f} against "
        f"the primer's {theirs[0]['logit']:.2f}, and our final γ runs "
        f"{gamma.min():.3f}–{gamma.max():.3f}, the primer's {min(primer.final_layernorm['gamma']):.3f}–"
        f"{max(primer.final_layernorm['gamma']):.3f}. In layer {printed_layer}, '{pattern_prompt[-1]}' reads "
        + " and ".join(
            f"'{pattern_prompt[int(np.argmax(np.array(row['weights'])[-1]))]}' most in the primer's head {row['head']} "
            f"(ours: '{pattern_prompt[int(np.argmax(ours_layer1[i, -1]))]}')"
            for i, row in enumerate(printed["heads"])
        )
        + ".",
        "Two training runs of the same design on the same data learn the same behaviour but not the same internals: "
        "which head does which job, and every individual weight, are accidents of the run. Judge a model by what it "
        "does, and treat any one head's picture as one run's story.",
    )


def step8_readout(model: Model, primer: PrimerSection6, ours_trace: Trace, prompt: tuple[str, ...]) -> None:
    """§6 Step 8 beside ours: the final LayerNorm's four printed lines, then all 20 logits and probabilities."""
    c, vocab = model.config, list(model.vocabulary)
    printed = primer.final_layernorm
    h2 = ours_trace[f"blocks.{c.n_layers - 1}.hook_resid_post"][-1]
    normed = ours_trace["ln_final.hook_normalized"][-1]
    ours_lines = [h2, model.params["ln_final.gamma"], model.params["ln_final.beta"], normed]
    names = ("h²_last", "γ", "β", "LN(h²)_last")
    keys = ("h2_last", "gamma", "beta", "normalized_last")
    st.markdown(f"**Step 8: the final LayerNorm of the last row ({prompt[-1]})**")
    matrix(
        np.stack([np.array(printed[k], dtype=np.float64) for k in keys] + ours_lines),
        title="primer's four printed lines, then ours",
        rows=[f"primer {n}" for n in names] + [f"ours {n}" for n in names],
        columns=column_names(c.d_model),
        key="tr-pvo-ln",
        alt="Final LayerNorm of the last row: h², γ, β and the output, primer vs ours",
    )
    (mean,), (std,) = row_moments(h2[None])
    m1, m2, m3, m4 = st.columns(4)
    m1.metric("mean of h²_last, primer", f"{printed['mean_before']:.3f}")
    m2.metric("mean of h²_last, ours", f"{mean:.3f}")
    m3.metric("σ of h²_last, primer", f"{printed['std_before']:.3f}")
    m4.metric("σ of h²_last, ours", f"{std:.3f}")
    gamma = np.array(printed["gamma"], dtype=np.float64)
    ours_gamma = model.params["ln_final.gamma"]
    explain(
        f"Both last rows are reset to mean 0 and spread 1, then stretched by γ: the primer's row (mean "
        f"{printed['mean_before']:.3f}, σ {printed['std_before']:.3f}) with γ from {gamma.min():.3f} to "
        f"{gamma.max():.3f}, ours (mean {mean:.3f}, σ {std:.3f}) with γ from {ours_gamma.min():.3f} to "
        f"{ours_gamma.max():.3f}. The outputs span {np.ptp(printed['normalized_last']):.2f} and "
        f"{np.ptp(normed):.2f}.",
        "However large the running sum grows, this norm hands the read-out a vector of a learned size: γ, not the "
        "depth of the network, sets how confident the final prediction can be.",
    )
    slip_box(slips("gamma_close_to_3", "span_about_nine"), key="tr-slips-step8")
    readout = primer.readout
    by_token = dict(zip(primer.vocabulary, zip(readout["logits"], readout["probs"], strict=True), strict=True))
    frame = pd.DataFrame(
        {
            "token": vocab,
            "primer: logit": [by_token[t][0] for t in vocab],
            "ours: logit": [round(float(v), 3) for v in ours_trace["hook_logits"][-1]],
            "primer: probability": [by_token[t][1] for t in vocab],
            "ours: probability": [round(float(v), 3) for v in ours_trace["hook_probs"][-1]],
        }
    )
    st.markdown(f"**All {len(vocab)} logits and probabilities after '{spaced(prompt)}'**")
    config = {column: st.column_config.NumberColumn(format="%.3f") for column in frame.columns[1:]}
    st.dataframe(
        frame, hide_index=True, key="tr-pvo-all", column_config=config, row_height=35, height=35 * (len(frame) + 1) + 4
    )
    download_table(frame, name="logits and probabilities, primer vs ours", key="tr-pvo-all")
    slip_box(slips("runners_up_share", "two_decimal_rounding"), key="tr-slips-readout")


def plain_words(model: Model, tokens: tuple[str, ...]) -> str:
    """What the page shows, in words, before any symbol; then the symbols its steps use, each explained."""
    c = model.config
    return (
        "**What this page shows.** A short sentence goes in, and each word becomes a list of numbers. The model then "
        f"works in {c.n_layers} rounds: in each, every word reads the words before it (attention), then is refined "
        "on its own (the MLP). The last word's numbers finally become a score for every word the model knows, and "
        "the highest score is its guess for the next word. Pick a step in the list to see the numbers at that "
        "point.\n\n"
        f"**Symbols.** *T* is the number of tokens in the prompt (here {len(tokens)}) and *d* (d_model) the numbers "
        f"kept per token ({c.d_model}); a shape *T* × *d* is a table of one row per token. *ids* are the tokens' "
        "positions in the vocabulary and *E* the embedding table (one row per vocabulary word), so "
        r"$E[\text{ids}] \in \mathbb{R}^{T \times d}$ reads “the prompt's rows of *E* form a table of real numbers, "
        "*T* rows by *d* columns”."
    )


def headline(model: Model, trace: Trace, tokens: tuple[str, ...]) -> None:
    """One line above the tabs: the prompt, the model's answer and the sizes."""
    winner = top_k(trace["hook_logits"][-1], model.vocabulary, 1)[0]
    st.markdown(
        f"**{spaced(tokens)}** → next token **{winner.token}** with probability **{winner.probability:.3f}** · "
        f"T = {len(tokens)} tokens · {model.n_params} parameters"
    )


VIEWS = {
    "Step by step": step_by_step,
    "Four heads": four_heads,
    "Residual stream": residual_spine,
    "Copula probe": copula_view,
    "How the weights came to be": training_view,
    "Primer vs ours": primer_vs_ours,
}
