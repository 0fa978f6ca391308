"""The overview as a briefing: the primer's §7 data flow as one clickable picture with the trained model's live shapes,
and five takeaways, each one sentence with a number the engine computes and a link to the page that shows it.

Pure presentation over core: the blocks, numbers and sentences are computed once per process (they depend on nothing
the reader changes) and shared read-only by every session; the page and the downloadable briefing draw the same ones.
"""

from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass
from functools import cache
from urllib.parse import urlencode

import plotly.graph_objects as go

from core.explain import experiments as ex
from core.explain.analysis import ablation_sweep, head_label, heads
from core.explain.conv import classify
from core.explain.primer import conv_example, hand_example
from core.explain.trace_views import primer_section6, shape_table, top_k
from core.explain.transformer import forward, hand_model
from core.explain.weights import trained_model
from core.explain.world import CLASS_ADJECTIVES, NOUN_CLASS
from core.plan import kv_cache as kv
from core.plan.model_config import presets
from ui.elements.briefing import Briefing, Chart
from ui.elements.comparisons import grouped_bars
from ui.elements.glossary import link, qkv_questions
from ui.elements.web import web_file

PROMPT = ("<BOS>", "the", "cat", "sat")  # the primer's §6 read-out prompt, the two-layer trace's default
KV_MODEL, KV_GPU, KV_CONTEXT = "llama-3.1-70b", "h100-sxm", 32768


@dataclass(frozen=True)
class Block:
    """One box of the data-flow picture: what it is, its live shape, the page step that opens it."""

    name: str
    shape: str
    href: str
    note: str
    repeated: bool = False  # inside the [attention → MLP] × L group


@dataclass(frozen=True)
class Takeaway:
    """One finding: a short title, one sentence (markdown, numbers from the engine) and the page that shows it."""

    title: str
    sentence: str
    href: str
    page: str


def trace_href(step: str, layer: int = 0) -> str:
    """The two-layer trace opened on one row of the shape table (the URL holds the row's label) in one layer."""
    rows = {row.key: row for row in shape_table(trained_model().config, len(PROMPT), layer)}
    query = {"trace_view": "Step by step", "trace_layer": f"Layer {layer + 1}", "trace_step": rows[step].step}
    return "two_layer_trace?" + urlencode(query)


@cache
def pipeline() -> tuple[Block, ...]:
    """Primer §7 for the trained model and the default prompt: tokens → h⁰ → [attention → MLP] × L → LN → logits →
    probabilities, each with the shape the shape table computes for T = 4."""
    config = trained_model().config
    rows = {row.key: row for row in shape_table(config, len(PROMPT), 0)}
    return (
        Block("Tokens", f"T = {len(PROMPT)}", trace_href("ids"), "the prompt as token ids"),
        Block("Embeddings + positions", rows["h0"].live, trace_href("h0"), "h⁰: one row per token"),
        Block("Attention", rows["weights"].live, trace_href("weights"), "tokens read each other", True),
        Block("MLP", rows["mlp_pre"].live, trace_href("mlp_pre"), "each token refined alone", True),
        Block("Final LayerNorm", rows["final_ln"].live, trace_href("final_ln"), "last row rescaled"),
        Block("Logits", rows["logits"].live, trace_href("logits"), "a score per vocabulary word"),
        Block("Probabilities", rows["probs"].live, trace_href("probs"), "softmax: sums to 1"),
    )


def pipeline_html(blocks: tuple[Block, ...], base: str = "") -> str:
    """The picture as an ordered list of linked boxes (keyboard-reachable, read aloud in order); arrows are drawn by
    CSS. Left to right on a wide screen, top to bottom on a phone. `base` prefixes links (the briefing file's)."""
    n_layers = trained_model().config.n_layers

    def box(block: Block) -> str:
        label = f"{block.name}, shape {block.shape}: {block.note}. Opens the two-layer trace at this step."
        return (
            f'<li class="pf-step"><a class="pf-box" href="{html.escape(base + block.href)}" '
            f'aria-label="{html.escape(label)}"><b>{html.escape(block.name)}</b>'
            f'<span class="pf-shape">{html.escape(block.shape)}</span>'
            f'<span class="pf-note">{html.escape(block.note)}</span></a></li>'
        )

    before = [b for b in blocks if not b.repeated and blocks.index(b) < 2]
    inner = [b for b in blocks if b.repeated]
    after = [b for b in blocks if not b.repeated and blocks.index(b) >= 2]
    group = (
        f'<li class="pf-step pf-group" aria-label="Repeated {n_layers} times, once per layer">'
        f'<span class="pf-times">× {n_layers} layers</span><ol class="pf-inner">'
        + "".join(box(b) for b in inner)
        + "</ol></li>"
    )
    items = "".join(box(b) for b in before) + group + "".join(box(b) for b in after)
    return f'<style>{PIPELINE_CSS}</style><ol class="pf" aria-label="The model\'s data flow (primer §7)">{items}</ol>'


PIPELINE_CSS = web_file("pipeline.css")


@cache
def numbers() -> dict[str, object]:
    """Every number the takeaways quote, from the engine (and the primer's printed figure, labelled as such)."""
    model = trained_model()
    sweep = ablation_sweep(model)
    off = ex.bench_reading(sweep, (), True)
    singles = {head_label(h): ex.bench_reading(sweep, (h,), False).rule_accuracy.now for h in heads(model.config)}
    ours = top_k(forward(model, [model.vocabulary.index(t) for t in PROMPT])["hook_logits"][-1], model.vocabulary, 1)
    example = hand_example()
    weights = forward(hand_model(), embeddings=example.X)["blocks.0.attn.hook_pattern"][0][-1]
    conv = conv_example()
    cnn = classify(conv.image, conv.filters)
    config, gpu = presets()[KV_MODEL], kv.gpus()[KV_GPU]
    deployment = kv.Deployment(gpu=gpu, context=KV_CONTEXT)
    tp = kv.smallest_tp(config, deployment)
    plan = kv.plan(config, dataclasses.replace(deployment, tp=tp)) if tp else None
    return {
        "rule_on": off.rule_accuracy.trained,
        "rule_off": off.rule_accuracy.now,
        "bigram_on": off.bigram_top1.trained,
        "bigram_off": off.bigram_top1.now,
        "singles": singles,
        "ours_token": ours[0].token,
        "ours_p": ours[0].probability,
        "primer_p": float(primer_section6().readout["p_on"]),
        "prompt": example.prompt,
        "weights": tuple(float(w) for w in weights),
        "cnn_class": cnn.classes[cnn.winner] if cnn.winner is not None else None,
        "cnn_p": float(cnn.probs.max()),
        "kernel": conv.filters[next(iter(conv.filters))].shape,
        "image": conv.image.shape,
        "kv_model": config.name,
        "kv_gpu": gpu.name,
        "kv_gb": kv.to_gb(kv.kv_bytes_per_sequence(config, KV_CONTEXT, "fp16")),
        "kv_tp": tp,
        "kv_users": plan.max_users if plan else 0,
        "kv_users_per_gpu": plan.users_per_gpu if plan else 0.0,
        "kv_cost": plan.cost_per_million if plan else None,
    }


def kv_href() -> str:
    """The cost calculator opened on the takeaway's scenario."""
    n = numbers()
    query = {"model": KV_MODEL, "gpu": KV_GPU, "context": KV_CONTEXT, "kv_dtype": "fp16", "tp": n["kv_tp"] or 1}
    return "kv_cost?" + urlencode(query)


def rule_examples() -> str:
    """The world's classes in running text: 'a cat or a dog is big or small, a mat or a floor is red or blue'."""
    nouns = {kind: [n for n, k in NOUN_CLASS.items() if k == kind] for kind in CLASS_ADJECTIVES}
    return ", ".join(
        f"{' or '.join(f'a {n}' for n in nouns[kind])} is {' or '.join(adjectives)}"
        for kind, adjectives in CLASS_ADJECTIVES.items()
    )


@cache
def takeaways() -> tuple[Takeaway, ...]:
    """The five findings, in the order the pages tell them."""
    n = numbers()
    w, (first, second, last) = n["weights"], n["prompt"]
    kh, kw = n["kernel"]
    cost = (
        f" and a million generated tokens cost about ${n['kv_cost']:.2f} of GPU time at best (full batches)"
        if n["kv_cost"]
        else ""
    )
    return (
        Takeaway(
            "A filter's window is fixed; a head's is chosen by the words",
            f"The primer's image network reads every {kh}×{kw} window with the same weights "
            f"and labels its {n['image'][0]}×{n['image'][1]} image *{n['cnn_class']}* with probability "
            f"{n['cnn_p']:.3f}; a {link('convolution', 'filter')} cannot choose where to look.",
            "cnn_vs_head",
            "CNN vs head",
        ),
        Takeaway(
            "Attention weights are computed, not stored",
            f"In the primer's §5 example the word *{last}* takes {w[0]:.0%} of what it reads from *{first}*, "
            f"{w[1]:.0%} from *{second}* and {w[2]:.0%} from itself (its attention weights, {w[0]:.3f}, {w[1]:.3f} "
            f"and {w[2]:.3f}, which sum to 1): the {link('attention-head')} works this split out from the words at "
            "run time.",
            "qkv_walkthrough",
            "QKV walkthrough",
        ),
        Takeaway(
            f"A {trained_model().n_params}-parameter model learns the primer's grammar",
            f"After *the cat sat*, our trained model puts {n['ours_p']:.3f} on *{n['ours_token']}* "
            f"(the primer's own model: {n['primer_p']:.3f}), the same answer from a separate training run.",
            "two_layer_trace",
            "Two-layer trace",
        ),
        Takeaway(
            "Only attention carries a word across positions",
            "The model's grammar rule (after *is* or *was* the adjective must fit the noun before it: "
            f"{rule_examples()}) needs a word carried from one position to another. Switching attention off takes "
            f"it from {n['rule_on']:.0%} to {n['rule_off']:.0%} right on test sentences kept out of training "
            f"({link('held-out', 'held out')}), while next-word guesses that need only the current word and its "
            f"place ({link('bigram-slot', 'bigram slots')}) fall from {n['bigram_on']:.0%} to {n['bigram_off']:.0%} "
            "right.",
            "ablation_lab?off=true",
            "Ablation lab",
        ),
        Takeaway(
            "Long conversations are paid for in GPU memory",
            f"One {KV_CONTEXT // 1024}K-token conversation on {n['kv_model']} holds {n['kv_gb']:.1f} GB of "
            f"{link('kv-cache')} at FP16; on {n['kv_tp']} {n['kv_gpu']} GPUs the model serves {n['kv_users']} "
            f"such conversations at once ({n['kv_users_per_gpu']:.2f} per GPU){cost}.",
            kv_href(),
            "KV-cache cost calculator",
        ),
    )


def plain_words() -> str:
    """What a query, a key and a value are and why the cache grows with the conversation, in the glossary's plain
    words, before any number of the page."""
    ask = qkv_questions()
    return (
        "**How words read each other.** At every layer each word makes three things from its current numbers: a "
        f"**query** (“{ask['query']}”), a **key** (“{ask['key']}”) and a **value** (“{ask['value']}”). A word "
        "compares its query with the key of every word before it; the better the match, the more of that word's "
        f"value it takes in ({link('attention-head', 'attention head')}).\n\n"
        "**Why long conversations cost memory.** An answer is written one word at a time, and each new word's query "
        "must be compared with the keys and values of every word so far. So the model keeps every earlier word's key "
        f"and value, the {link('kv-cache')}, instead of working them out again; queries are used once and dropped. "
        "Each word of the conversation, the prompt and the answer alike, adds one key and one value at every layer: "
        "the cache grows with the conversation, and so does the GPU memory it needs."
    )


def shapes_note() -> str:
    """How to read the picture's shapes, with the model's own sizes."""
    c = trained_model().config
    return (
        f"Each box shows the shape of the numbers at that point: {len(PROMPT)} × {c.d_model} means {len(PROMPT)} "
        f"tokens, each held as {c.d_model} numbers; [{c.vocab_size}] is a single list of {c.vocab_size} numbers (a "
        "score for each word of the vocabulary)."
    )


def lead() -> str:
    """The page's first sentence: the point, with live numbers."""
    n = numbers()
    return (
        f"**A Transformer predicts the next word by letting words read each other.** Our small trained model answers "
        f"*{n['ours_token']}* after *the cat sat* with probability {n['ours_p']:.3f}; switch its attention off and it "
        f"no longer gets its grammar rule right (the right kind of word after *is*, which depends on the noun before "
        f"it): {n['rule_on']:.0%} of the test sentences right before, {n['rule_off']:.0%} after."
    )


@cache
def ablation_figure() -> go.Figure:
    """Rule accuracy of the trained model, with each head switched off and with attention off."""
    n = numbers()
    labels = ["full model", *n["singles"], "attention off"]
    values = [n["rule_on"], *n["singles"].values(), n["rule_off"]]
    fig = grouped_bars(
        labels,
        [("held-out rule accuracy", values)],
        title="What switching parts off breaks: the grammar rule",
        y_title="rule accuracy",
        height=320,
    )
    return fig.update_layout(template="none", showlegend=False)


def ablation_alt() -> str:
    """Text alternative of the ablation chart."""
    n = numbers()
    parts = ", ".join(f"{name} off {value:.2f}" for name, value in n["singles"].items())
    return (
        f"Bar chart of held-out rule accuracy: full model {n['rule_on']:.2f}, {parts}, "
        f"attention off {n['rule_off']:.2f}."
    )


@cache
def readout_figure() -> go.Figure:
    """P(next word) after the §6 prompt: our model beside the primer's printed figures, top five of the primer's."""
    model, primer = trained_model(), primer_section6()
    probs = forward(model, [model.vocabulary.index(t) for t in PROMPT])["hook_probs"][-1]
    top5 = primer.readout["top5"]
    words = [row["token"] for row in top5]
    ours = [float(probs[model.vocabulary.index(word)]) for word in words]
    fig = grouped_bars(
        words,
        [("our model", ours), ("primer's model (printed)", [float(row["probability"]) for row in top5])],
        title="Next word after “the cat sat”: ours beside the primer's",
        y_title="probability",
        value_format=".3f",
        height=320,
    )
    return fig.update_layout(template="none")


def ablation_what() -> str:
    """What the ablation chart shows, from its numbers."""
    n = numbers()
    singles = n["singles"].values()
    heads_part = (
        f"with any one of its {len(n['singles'])} heads off it answers {min(singles):.0%} to {max(singles):.0%}"
    )
    return (
        f"The full model answers {n['rule_on']:.0%} of the held-out grammar questions right; {heads_part}; with "
        f"attention off it answers {n['rule_off']:.0%}."
    )


def ablation_why() -> str:
    """Why a manager should care about the ablation chart."""
    return (
        "A model's relational skills (agreement, who did what, what was said earlier) live in its attention: "
        "this is where to look when such a skill fails, and what long-context serving pays memory for."
    )


def readout_alt() -> str:
    """Text alternative of the read-out chart."""
    primer = primer_section6().readout["top5"]
    model = trained_model()
    probs = forward(model, [model.vocabulary.index(t) for t in PROMPT])["hook_probs"][-1]
    pairs = ", ".join(
        f"{row['token']}: ours {probs[model.vocabulary.index(row['token'])]:.3f}, primer's {row['probability']:.3f}"
        for row in primer
    )
    return f"Bar chart of next-word probabilities after the cat sat: {pairs}."


def readout_what() -> str:
    """What the read-out chart shows."""
    n = numbers()
    return (
        f"Both models put nearly all their probability on *on*: ours {n['ours_p']:.3f}, the primer's "
        f"{n['primer_p']:.3f} (printed in its §6). Two separate training runs of the same shape learn the same answer."
    )


def honesty() -> str:
    """Exactly which pages' defaults reproduce the primer's printed numbers, and which run our own model."""
    n = numbers()
    primer_7b = presets()["primer-7b"]
    gb = kv.to_gb(kv.kv_bytes_per_sequence(primer_7b, KV_CONTEXT, "fp16"))
    return (
        f"**Reproduce the primer's printed numbers:** CNN vs head (Appendix B's image and filters, label "
        f"*{n['cnn_class']}*), the QKV walkthrough (§5's three tokens and weights: *{n['prompt'][-1]}* attends "
        f"{n['weights'][2]:.3f} to itself) and the cost calculator's primer example (§3–4: a 7B model at "
        f"{KV_CONTEXT:,} tokens, FP16, holds {gb:.2f} GB of KV cache). **Run our own model:** the two-layer trace "
        "and the ablation lab use a model we trained with exactly the primer's §6 shape, because the primer's "
        f"weights are not published; their first lines say so and show the primer's printed figures beside ours "
        f"(P(on): ours {n['ours_p']:.3f} · primer's model {n['primer_p']:.3f})."
    )


def briefing(url: str) -> Briefing:
    """The overview as a file to take away: the picture, the takeaways, both charts and the link to the app at `url`
    (read while the page runs: the file is built later, outside the page's run)."""
    return Briefing(
        title="Inside a Transformer: the briefing",
        lead=lead(),
        link=url,
        app_url=url,
        picture="<h2>The whole model in one picture</h2>" + pipeline_html(pipeline(), base=url),
        sections=(
            ("In plain words", [plain_words()]),
            ("Five takeaways", [f"**{t.title}.** {t.sentence} [Open {t.page}]({t.href})" for t in takeaways()]),
            ("Which defaults reproduce the primer", [honesty()]),
        ),
        charts=(
            Chart(ablation_figure(), ablation_alt(), ablation_what()),
            Chart(readout_figure(), readout_alt(), readout_what()),
        ),
    )
